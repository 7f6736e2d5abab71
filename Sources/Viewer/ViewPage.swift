/// The page `tape view` serves: the timeline drawn as `tape draw` draws it (tracks, clips with
/// their waveforms and fades, volume envelopes, markers, names), following the server's events.
///
/// Everything is in this one document (no asset from anywhere else). Each clip is an element
/// `.clip` with `data-id`, `data-track` and `data-start` (its start in frames), which take
/// their new values as soon as a move arrives, while the clip slides there through the steps
/// of the model's interpolation (``ViewModel/Update``). The history strip reads versions
/// without moving the head.
public enum ViewPage {
  public static let html = """
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>tape view</title>
    <style>
      :root { --label: 160px; }
      body { margin: 0; font: 13px/1.3 "DejaVu Sans", system-ui, sans-serif; background: #1d1f21; color: #ddd; }
      header { padding: 8px 12px; display: flex; gap: 16px; align-items: baseline; background: #26282b; }
      header #title { font-weight: bold; }
      header #status { color: #9a9; }
      #history { display: flex; gap: 4px; overflow-x: auto; padding: 6px 12px; background: #222427; }
      #history button { background: #333; color: #ccc; border: 1px solid #444; border-radius: 3px; padding: 2px 6px; cursor: pointer; white-space: nowrap; font: inherit; }
      #history button.head { border-color: #8c8; color: #fff; }
      #history button.shown { background: #456; }
      #banner { display: none; padding: 4px 12px; background: #543; }
      #banner.on { display: block; }
      #timeline { position: relative; margin: 8px 12px; }
      #ruler { position: relative; height: 18px; margin-left: var(--label); color: #888; }
      #ruler span { position: absolute; top: 0; border-left: 1px solid #555; padding-left: 2px; font-size: 11px; }
      .track { position: relative; height: 64px; border-top: 1px solid #333; }
      .track .name { position: absolute; left: 0; width: calc(var(--label) - 8px); top: 4px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
      .track .name small { display: block; color: #888; }
      .track.muted .lane { opacity: 0.45; }
      .lane { position: absolute; left: var(--label); right: 0; top: 0; bottom: 0; }
      .clip { position: absolute; top: 4px; bottom: 4px; background: #35506b; border: 1px solid #6a8db0; border-radius: 3px; overflow: hidden; box-sizing: border-box; }
      .clip svg { position: absolute; inset: 0; width: 100%; height: 100%; }
      .clip .label { position: absolute; left: 3px; top: 1px; font-size: 11px; color: #fff; text-shadow: 0 0 2px #000; white-space: nowrap; }
      .envelope { position: absolute; inset: 0; pointer-events: none; }
      .marker { position: absolute; top: 0; bottom: 0; border-left: 1px dashed #e0b050; pointer-events: none; }
      .marker span { position: absolute; top: -16px; left: 2px; color: #e0b050; font-size: 11px; white-space: nowrap; }
      #markers { position: absolute; left: var(--label); right: 0; top: 18px; bottom: 0; pointer-events: none; }
      #playhead { position: absolute; top: 18px; bottom: 0; width: 0; border-left: 2px solid #e55; display: none; pointer-events: none; }
    </style>
    </head>
    <body>
    <header><span id="title">tape view</span><span id="version"></span><span id="status">connecting…</span></header>
    <div id="history"></div>
    <div id="banner"></div>
    <div id="timeline"><div id="ruler"></div><div id="tracks"></div><div id="markers"></div><div id="playhead"></div></div>
    <script>
    "use strict";
    const token = new URLSearchParams(location.search).get("token") || "";
    const withToken = path => path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
    let head = null, shown = null, viewing = null, playhead = null, animation = null;

    function pxPerFrame(snapshot) {
      const lane = document.getElementById("timeline").clientWidth - 160;
      const frames = Math.max(snapshot.end, snapshot.sampleRate * 10);
      return Math.max(lane, 200) / frames;
    }
    function clock(frames, rate) {
      const seconds = frames / rate, m = Math.floor(seconds / 60), s = seconds - m * 60;
      return m + ":" + (s < 10 ? "0" : "") + s.toFixed(3);
    }
    function svg(tag, attributes) {
      const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
      for (const [k, v] of Object.entries(attributes)) element.setAttribute(k, v);
      return element;
    }
    function clipElement(clip, scale) {
      const element = document.createElement("div");
      element.className = "clip";
      element.id = "clip-" + clip.id;
      place(element, clip, scale);
      const picture = svg("svg", { viewBox: "0 0 1000 100", preserveAspectRatio: "none" });
      if (clip.wave.length > 1) {
        const n = clip.wave.length, top = [], bottom = [];
        clip.wave.forEach((v, i) => {
          const x = (i / (n - 1) * 1000).toFixed(1);
          top.push(x + "," + (50 - v * 48).toFixed(1));
          bottom.unshift(x + "," + (50 + v * 48).toFixed(1));
        });
        picture.appendChild(svg("polygon", { points: top.concat(bottom).join(" "), fill: "#9cc3e6", opacity: "0.8" }));
      }
      const fade = points => picture.appendChild(svg("polygon", { points: points, fill: "#000", opacity: "0.35" }));
      if (clip.fadeIn > 0) fade("0,0 " + (clip.fadeIn / clip.length * 1000).toFixed(1) + ",0 0,100");
      if (clip.fadeOut > 0) fade("1000,0 " + (1000 - clip.fadeOut / clip.length * 1000).toFixed(1) + ",0 1000,100");
      element.appendChild(picture);
      const label = document.createElement("span");
      label.className = "label";
      label.textContent = clip.id + (clip.name ? " " + clip.name : "");
      element.appendChild(label);
      return element;
    }
    function place(element, clip, scale) {
      element.dataset.id = clip.id;
      element.dataset.track = clip.track;
      element.dataset.start = String(clip.start);
      element.dataset.length = String(clip.length);
      element.style.left = (clip.start * scale) + "px";
      element.style.width = Math.max(2, clip.length * scale) + "px";
    }
    function draw(snapshot) {
      shown = snapshot;
      const scale = pxPerFrame(snapshot);
      const tracks = document.getElementById("tracks");
      tracks.textContent = "";
      for (const track of snapshot.tracks) {
        const row = document.createElement("div");
        row.className = "track" + (track.muted ? " muted" : "");
        row.dataset.id = track.id;
        const name = document.createElement("div");
        name.className = "name";
        name.textContent = track.id + " " + track.name;
        const detail = document.createElement("small");
        detail.textContent = track.gain.toFixed(1) + " dB" + (track.pan ? " pan " + track.pan : "") + (track.muted ? " muted" : "") + (track.solo ? " solo" : "");
        name.appendChild(detail);
        row.appendChild(name);
        const lane = document.createElement("div");
        lane.className = "lane";
        for (const clip of track.clips) lane.appendChild(clipElement(clip, scale));
        if (track.envelope.length > 0) {
          const width = Math.max(snapshot.end, snapshot.sampleRate * 10) * scale;
          const line = svg("svg", { class: "envelope", viewBox: "0 0 " + width.toFixed(0) + " 64", preserveAspectRatio: "none" });
          const y = db => Math.min(62, Math.max(2, 8 - db * 1.5));
          const points = [[0, track.envelope[0][1]]].concat(track.envelope.map(p => [p[0] * scale, p[1]]));
          points.push([width, track.envelope[track.envelope.length - 1][1]]);
          line.appendChild(svg("polyline", { points: points.map(p => p[0].toFixed(1) + "," + y(p[1]).toFixed(1)).join(" "), fill: "none", stroke: "#f0c674", "stroke-width": "1.5" }));
          lane.appendChild(line);
        }
        row.appendChild(lane);
        tracks.appendChild(row);
      }
      const markers = document.getElementById("markers");
      markers.textContent = "";
      for (const marker of snapshot.markers) {
        const line = document.createElement("div");
        line.className = "marker";
        line.dataset.id = marker.id;
        line.dataset.at = String(marker.at);
        line.style.left = (marker.at * scale) + "px";
        const name = document.createElement("span");
        name.textContent = marker.name;
        line.appendChild(name);
        markers.appendChild(line);
      }
      const ruler = document.getElementById("ruler");
      ruler.textContent = "";
      const total = Math.max(snapshot.end, snapshot.sampleRate * 10);
      const step = [1, 2, 5, 10, 15, 30, 60, 120, 300].find(s => total / snapshot.sampleRate / s <= 12) || 600;
      for (let s = 0; s * snapshot.sampleRate <= total; s += step) {
        const tick = document.createElement("span");
        tick.style.left = (s * snapshot.sampleRate * scale) + "px";
        tick.textContent = clock(s * snapshot.sampleRate, snapshot.sampleRate);
        ruler.appendChild(tick);
      }
      document.getElementById("version").textContent = "version " + snapshot.version + (viewing === null ? " (head)" : "");
      drawPlayhead();
    }
    function drawPlayhead() {
      const line = document.getElementById("playhead");
      if (!shown || !playhead || playhead.frame === null || playhead.frame === undefined) {
        line.style.display = "none";
        line.removeAttribute("data-frame");
        return;
      }
      line.style.display = "block";
      line.dataset.frame = String(playhead.frame);
      line.style.left = "calc(var(--label) + " + (playhead.frame * pxPerFrame(shown)) + "px)";
    }
    // A move of the head: each moved clip takes its new data-* at once and slides there through
    // the model's steps, then the new version is drawn whole.
    function animate(update) {
      if (animation) { clearInterval(animation); animation = null; }
      if (viewing !== null || !shown || update.steps.length === 0) { if (viewing === null) draw(update.snapshot); return; }
      const scale = pxPerFrame(shown);
      const last = update.steps[update.steps.length - 1];
      for (const p of last) {
        const element = document.getElementById("clip-" + p.id);
        if (element) { element.dataset.start = String(p.start); element.dataset.track = p.track; element.dataset.length = String(p.length); }
      }
      let index = 0;
      animation = setInterval(() => {
        if (index >= update.steps.length) {
          clearInterval(animation);
          animation = null;
          draw(update.snapshot);
          return;
        }
        for (const p of update.steps[index]) {
          const element = document.getElementById("clip-" + p.id);
          if (!element) continue;
          const lane = document.querySelector('.track[data-id="' + p.track + '"] .lane');
          if (lane && element.parentElement !== lane) lane.appendChild(element);
          element.style.left = (p.start * scale) + "px";
          element.style.width = Math.max(2, p.length * scale) + "px";
        }
        index += 1;
      }, 20);
    }
    async function history() {
      const response = await fetch(withToken("/history"));
      if (!response.ok) return;
      const list = await response.json();
      const strip = document.getElementById("history");
      strip.textContent = "";
      for (const entry of list.versions) {
        const button = document.createElement("button");
        button.dataset.version = String(entry.version);
        button.textContent = "v" + entry.version + " " + entry.label;
        button.title = new Date(entry.date * 1000).toLocaleString();
        if (entry.version === list.head) button.classList.add("head");
        if (viewing === entry.version) button.classList.add("shown");
        button.onclick = () => show(entry.version === list.head ? null : entry.version);
        strip.appendChild(button);
      }
    }
    async function show(version) {
      viewing = version;
      const banner = document.getElementById("banner");
      if (version === null) {
        banner.className = "";
        if (head) draw(head);
      } else {
        const response = await fetch(withToken("/version/" + version));
        if (!response.ok) return;
        draw(await response.json());
        banner.className = "on";
        banner.textContent = "Showing version " + version + " (reading only; the head is version " + (head ? head.version : "?") + "). Click the head's version to follow it again.";
      }
      history();
    }
    const events = new EventSource(withToken("/events"));
    events.addEventListener("open", () => { document.getElementById("status").textContent = "following"; });
    events.addEventListener("error", () => { document.getElementById("status").textContent = "reconnecting…"; });
    // When the page last heard of a version (for whoever looks: the tests time a commit to
    // the page with it).
    function heard(version) {
      document.body.dataset.version = String(version);
      document.body.dataset.heardAt = String(Date.now());
    }
    events.addEventListener("snapshot", e => {
      head = JSON.parse(e.data);
      heard(head.version);
      if (viewing === null) draw(head);
      history();
    });
    events.addEventListener("update", e => {
      const update = JSON.parse(e.data);
      head = update.snapshot;
      heard(head.version);
      document.getElementById("status").textContent = "following (last: " + update.cause + ")";
      animate(update);
      history();
    });
    events.addEventListener("playhead", e => { playhead = JSON.parse(e.data); drawPlayhead(); });
    addEventListener("resize", () => { if (shown) draw(shown); });
    </script>
    </body>
    </html>
    """
}
