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
      #history .earlier { color: #888; white-space: nowrap; align-self: center; }
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
      #timeline { --scale: 0.001; }
      .clip { position: absolute; top: 4px; bottom: 4px; left: calc(var(--start) * var(--scale) * 1px); width: max(2px, calc(var(--length) * var(--scale) * 1px)); background: #35506b; border: 1px solid #6a8db0; border-radius: 3px; overflow: hidden; box-sizing: border-box; }
      .clip svg { position: absolute; inset: 0; width: 100%; height: 100%; }
      .clip .label { position: absolute; left: 3px; top: 1px; font-size: 11px; color: #fff; text-shadow: 0 0 2px #000; white-space: nowrap; }
      .envelope { position: absolute; inset: 0; width: 100%; height: 100%; pointer-events: none; }
      .marker { position: absolute; top: 0; bottom: 0; left: calc(var(--at) * var(--scale) * 1px); border-left: 1px dashed #e0b050; pointer-events: none; }
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
    // The head as the page keeps it (tracks in order, clips by id), changed in place by each
    // update's changes; `shown` is what is drawn (the head, or a version of the history).
    let head = null, shown = null, viewing = null, playhead = null, animation = null;
    let queue = Promise.resolve();
    // The history strip shows the last versions of the head's line, not a million buttons.
    const historyShown = 200;
    const later = work => { queue = queue.then(work).catch(error => console.error(error)); };

    function modelOf(snapshot) {
      const model = { version: snapshot.version, sampleRate: snapshot.sampleRate, end: snapshot.end,
        order: [], tracks: new Map(), clips: new Map(), markers: snapshot.markers };
      for (const track of snapshot.tracks) {
        model.order.push(track.id);
        model.tracks.set(track.id, track);
        for (const clip of track.clips) model.clips.set(clip.id, clip);
        track.clips = [];
      }
      return model;
    }
    function apply(model, version, changes) {
      model.version = version;
      model.sampleRate = changes.sampleRate;
      model.end = changes.end;
      model.order = changes.order;
      for (const id of changes.removedTracks) model.tracks.delete(id);
      for (const track of changes.tracks) model.tracks.set(track.id, track);
      for (const id of changes.removedClips) model.clips.delete(id);
      for (const clip of changes.clips) model.clips.set(clip.id, clip);
      if (changes.markers) model.markers = changes.markers;
    }
    const total = model => Math.max(model.end, model.sampleRate * 10);
    function clock(frames, rate) {
      const seconds = frames / rate, m = Math.floor(seconds / 60), s = seconds - m * 60;
      return m + ":" + (s < 10 ? "0" : "") + s.toFixed(3);
    }
    function svg(tag, attributes) {
      const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
      for (const [k, v] of Object.entries(attributes)) element.setAttribute(k, v);
      return element;
    }
    function clipElement(clip) {
      const element = document.createElement("div");
      element.className = "clip";
      element.id = "clip-" + clip.id;
      place(element, clip);
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
    // Where a clip is: data-* for whoever reads the page, and the frames its place is drawn
    // from (the pixels follow from --scale, so a new length of the project moves no clip).
    function place(element, clip) {
      element.dataset.id = clip.id;
      element.dataset.track = clip.track;
      element.dataset.start = String(clip.start);
      element.dataset.length = String(clip.length);
      element.style.setProperty("--start", String(clip.start));
      element.style.setProperty("--length", String(clip.length));
    }
    const lane = id => document.querySelector('.track[data-id="' + id + '"] .lane');
    const number = id => Number(id.slice(1));
    const timelineOrder = (a, b) => a.start - b.start || number(a.id) - number(b.id);
    // A clip's element put in its lane where timeline order puts it (overlapping clips stack
    // as they do when the lane is drawn whole).
    function putInLane(into, element, clip) {
      for (const other of into.querySelectorAll(":scope > .clip")) {
        if (other === element) continue;
        const at = { start: Number(other.dataset.start), id: other.dataset.id };
        if (timelineOrder(clip, at) < 0) { into.insertBefore(element, other); return; }
      }
      const envelope = into.querySelector(":scope > .envelope");
      if (envelope) into.insertBefore(element, envelope); else into.appendChild(element);
    }
    function trackRow(track, model) {
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
      row.appendChild(lane);
      envelope(lane, track, model);
      return row;
    }
    // A track's volume envelope, drawn in frames across the whole lane.
    function envelope(lane, track, model) {
      const old = lane.querySelector(".envelope");
      if (old) old.remove();
      if (track.envelope.length === 0) return;
      const width = total(model);
      const line = svg("svg", { class: "envelope", viewBox: "0 0 " + width + " 64", preserveAspectRatio: "none" });
      const y = db => Math.min(62, Math.max(2, 8 - db * 1.5));
      const points = [[0, track.envelope[0][1]]].concat(track.envelope);
      points.push([width, track.envelope[track.envelope.length - 1][1]]);
      line.appendChild(svg("polyline", { points: points.map(p => p[0] + "," + y(p[1]).toFixed(1)).join(" "), fill: "none", stroke: "#f0c674", "stroke-width": "1.5", "vector-effect": "non-scaling-stroke" }));
      lane.appendChild(line);
    }
    // The pixels per frame, and what is drawn in them: the ruler and the envelopes.
    let drawnTotal = null;
    function scale(model, force) {
      const width = Math.max(document.getElementById("timeline").clientWidth - 160, 200);
      document.getElementById("timeline").style.setProperty("--scale", String(width / total(model)));
      if (!force && drawnTotal === total(model)) return;
      drawnTotal = total(model);
      const ruler = document.getElementById("ruler");
      ruler.textContent = "";
      const frames = total(model), rate = model.sampleRate;
      const step = [1, 2, 5, 10, 15, 30, 60, 120, 300].find(s => frames / rate / s <= 12) || 600;
      for (let s = 0; s * rate <= frames; s += step) {
        const tick = document.createElement("span");
        tick.style.left = (s * rate * width / frames) + "px";
        tick.textContent = clock(s * rate, rate);
        ruler.appendChild(tick);
      }
      if (!force) for (const id of model.order) { const l = lane(id); if (l) envelope(l, model.tracks.get(id), model); }
    }
    function drawMarkers(model) {
      const markers = document.getElementById("markers");
      markers.textContent = "";
      for (const marker of model.markers) {
        const line = document.createElement("div");
        line.className = "marker";
        line.dataset.id = marker.id;
        line.dataset.at = String(marker.at);
        line.style.setProperty("--at", String(marker.at));
        const name = document.createElement("span");
        name.textContent = marker.name;
        line.appendChild(name);
        markers.appendChild(line);
      }
    }
    function drawVersion(model) {
      document.getElementById("version").textContent = "version " + model.version + (viewing === null ? " (head)" : "");
    }
    // The model drawn whole.
    function draw(model) {
      stopAnimation(false);
      shown = model;
      const tracks = document.getElementById("tracks");
      tracks.textContent = "";
      const lanes = new Map();
      for (const id of model.order) {
        const row = trackRow(model.tracks.get(id), model);
        lanes.set(id, row.querySelector(".lane"));
        tracks.appendChild(row);
      }
      // Each lane's clips in timeline order (start, then id), as tape draw stacks them.
      for (const clip of Array.from(model.clips.values()).sort(timelineOrder)) {
        const into = lanes.get(clip.track);
        if (into) into.appendChild(clipElement(clip));
      }
      scale(model, true);
      drawMarkers(model);
      drawVersion(model);
      drawPlayhead();
    }
    // The head's changes drawn where they are: the clips and tracks that changed, not the rest.
    function patch(changes) {
      shown = head;
      const rows = Array.from(document.querySelectorAll("#tracks .track")).map(row => row.dataset.id);
      if (rows.join(" ") !== head.order.join(" ")) { draw(head); return; }
      for (const track of changes.tracks) {
        const row = document.querySelector('.track[data-id="' + track.id + '"]');
        if (!row) { draw(head); return; }
        const fresh = trackRow(track, head);
        const lane = row.querySelector(".lane");
        fresh.replaceChild(lane, fresh.querySelector(".lane"));
        envelope(lane, track, head);
        row.replaceWith(fresh);
      }
      for (const id of changes.removedClips) {
        const element = document.getElementById("clip-" + id);
        if (element) element.remove();
      }
      for (const clip of changes.clips) {
        const old = document.getElementById("clip-" + clip.id);
        if (old) old.remove();
        const into = lane(clip.track);
        if (into) putInLane(into, clipElement(clip), clip);
      }
      scale(head, false);
      if (changes.markers) drawMarkers(head);
      drawVersion(head);
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
      line.style.left = "calc(var(--label) + " + playhead.frame + " * var(--scale) * 1px)";
    }
    // An animation under way ends: at its end (drawing what it ends on), or dropped when the
    // page is about to be drawn whole anyway.
    function stopAnimation(finish) {
      if (!animation) return;
      clearInterval(animation.timer);
      const end = animation.end;
      animation = null;
      if (finish) end();
    }
    // A move of the head: each moved clip takes its new data-* at once and slides there through
    // the model's steps; then what changed is drawn (or the version whole, sent whole).
    function animate(update) {
      stopAnimation(true);
      if (viewing !== null) return;
      const end = () => update.changes ? patch(update.changes) : draw(head);
      if (!shown || update.steps.length === 0) { end(); return; }
      const last = update.steps[update.steps.length - 1];
      for (const p of last) {
        const element = document.getElementById("clip-" + p.id);
        if (element) { element.dataset.start = String(p.start); element.dataset.track = p.track; element.dataset.length = String(p.length); }
      }
      let index = 0;
      const state = { timer: null, end };
      state.timer = setInterval(() => {
        if (index >= update.steps.length) {
          // Its end drawn in turn with the events (never between an update's model and its
          // drawing), and only if no later update has ended it already.
          clearInterval(state.timer);
          later(() => { if (animation === state) stopAnimation(true); });
          return;
        }
        for (const p of update.steps[index]) {
          const element = document.getElementById("clip-" + p.id);
          if (!element) continue;
          const into = lane(p.track);
          if (into && element.parentElement !== into) into.appendChild(element);
          element.style.setProperty("--start", String(p.start));
          element.style.setProperty("--length", String(p.length));
        }
        index += 1;
      }, 20);
      animation = state;
    }
    // Only the newest request's answer is drawn (answers may come back in any order).
    let historyAsked = 0;
    async function history() {
      const asked = ++historyAsked;
      const response = await fetch(withToken("/history?last=" + historyShown));
      if (!response.ok) return;
      const list = await response.json();
      if (asked !== historyAsked) return;
      const strip = document.getElementById("history");
      strip.textContent = "";
      if (list.earlier > 0) {
        const more = document.createElement("span");
        more.className = "earlier";
        more.textContent = "… " + list.earlier + " earlier";
        strip.appendChild(more);
      }
      for (const entry of list.versions) {
        const button = document.createElement("button");
        button.dataset.version = String(entry.version);
        button.textContent = "v" + entry.version + " " + entry.label;
        button.title = new Date(entry.date * 1000).toLocaleString();
        if (entry.version === list.head) button.classList.add("head");
        if (viewing === entry.version) button.classList.add("shown");
        button.onclick = () => later(() => show(entry.version === list.head ? null : entry.version));
        strip.appendChild(button);
      }
    }
    async function show(version) {
      const banner = document.getElementById("banner");
      if (version === null) {
        viewing = null;
        banner.className = "";
        if (head) draw(head);
      } else {
        const response = await fetch(withToken("/version/" + version));
        if (!response.ok) return;
        const model = modelOf(await response.json());
        viewing = version;
        draw(model);
        banner.className = "on";
        banner.textContent = "Showing version " + version + " (reading only; the head is version " + (head ? head.version : "?") + "). Click the head's version to follow it again.";
      }
      history();
    }
    // The head fetched whole: for a page that has lost its way (an update it missed).
    async function resync() {
      const response = await fetch(withToken("/snapshot"));
      if (!response.ok) return;
      head = modelOf(await response.json());
      heard(head.version);
      if (viewing === null) draw(head);
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
    events.addEventListener("snapshot", e => later(() => {
      head = modelOf(JSON.parse(e.data));
      heard(head.version);
      if (viewing === null) draw(head);
      history();
    }));
    events.addEventListener("update", e => later(async () => {
      const update = JSON.parse(e.data);
      document.getElementById("status").textContent = "following (last: " + update.cause + ")";
      // The animation under way ends on the head it was made for, before this one changes it.
      stopAnimation(true);
      if (update.snapshot) {
        head = modelOf(update.snapshot);
      } else if (head && head.version === update.from) {
        apply(head, update.version, update.changes);
        if (head.clips.size !== update.changes.clipCount) { await resync(); history(); return; }
      } else {
        await resync();
        history();
        return;
      }
      heard(head.version);
      animate(update);
      history();
    }));
    events.addEventListener("playhead", e => { playhead = JSON.parse(e.data); drawPlayhead(); });
    addEventListener("resize", () => { if (shown) scale(shown, true); });
    </script>
    </body>
    </html>
    """
}
