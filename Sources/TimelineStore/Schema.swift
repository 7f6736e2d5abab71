internal import GRDB
import Timeline

/// The project file's tables and migrations.
///
/// Rule: invariants live in the schema (NOT NULL, CHECK, foreign keys), so a bug in Swift cannot
/// write an impossible project. Why: "trust SQLite more than yourself" (GRDB). What if you
/// don't: a bad row would only be found when something tries to render it.
///
/// Foreign keys have no ON DELETE CASCADE: SQLite 3.40 runs cascades while applying a changeset,
/// so a redo that deletes a track and its clips would find the clips already gone and abort.
/// The store deletes a track's clips itself, in the same commit.
enum Schema {
  static let projectTable = ProjectRow.table
  static let sourceTable = SourceRow.table
  static let trackTable = TrackRow.table
  static let clipTable = ClipRow.table
  static let envelopeTable = EnvelopeRow.table
  static let masterTable = MasterRow.table
  static let envelopePointTable = EnvelopePointRow.table
  static let effectTable = EffectRow.table
  static let markerTable = MarkerRow.table
  static let clipDetailTable = ClipDetailRow.table
  static let trackOutputTable = TrackOutputRow.table
  static let sendTable = SendRow.table
  static let effectSidechainTable = EffectSidechainRow.table
  static let effectAutomationTable = EffectAutomationRow.table
  static let effectFileTable = EffectFileRow.table
  static let laneTable = LaneRow.table
  static let takeTable = TakeRow.table
  static let pendingMoveTable = "pending_move"
  static let pendingTailTable = "pending_move_tail"
  /// The migrations that made ``pendingMoveTable`` and ``pendingTailTable``: a file that records
  /// one and lacks its table was damaged, not made before it.
  static let pendingMoveMigration = "v13"
  static let pendingTailMigration = "v14"

  /// The tables whose changes are history; everything else (ids, head, transient state) is not.
  /// New tables are added at the end, never columns to a table: a changeset records a table's
  /// column count, and every old version's changeset must stay readable. Each one's
  /// ``TrackedRow/index`` is its position here (a test checks it).
  static let trackedRows: [any TrackedRow.Type] = [
    ProjectRow.self, SourceRow.self, TrackRow.self, ClipRow.self, EnvelopeRow.self,
    MasterRow.self, EnvelopePointRow.self, EffectRow.self, MarkerRow.self, ClipDetailRow.self,
    TrackOutputRow.self, SendRow.self, EffectSidechainRow.self, EffectAutomationRow.self,
    EffectFileRow.self, LaneRow.self, TakeRow.self,
  ]
  static let trackedTables = trackedRows.map { $0.table }

  /// Each tracked table's columns in declaration order (``TrackedRow/columns``), by the table's
  /// index in ``trackedTables``.
  static let trackedColumns: [[String]] = trackedRows.map { $0.columns }

  /// Each tracked table's columns by name.
  static let columns = Dictionary(uniqueKeysWithValues: trackedRows.map { ($0.table, $0.columns) })

  /// The migrations a reader needs: it reads a file that has these as it is. The later ones
  /// add tables that a reader takes as empty when they are absent (v5: envelopes and master
  /// gain; v6: envelope points; v7: effects; v8: markers; v9: clipboards; v10: tags; v11: clip
  /// names and cut fades) or what it can do without (v12: a third span of history blocks;
  /// v13: the pending move, ``PendingMove``, which a file without it has none of; v14: the
  /// pending move's tail, likewise; v15: outputs and sends, none; v16: side chains, none; v17:
  /// automation, none; v18: effects' files, none; v19: pan automation and sends'
  /// envelopes, none; v20: clipboards' pan lanes and sends' envelopes, none; v21: kept takes,
  /// none), so reading
  /// an older project neither needs it writable nor upgrades it.
  static let readerMigrations: Set<String> = ["v1", "v2", "v3", "v4"]

  /// `PRAGMA application_id` of a Tape project: "TAPE".
  static let applicationID: Int32 = 0x5441_5045

  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1") { db in
      let rates = Project.supportedSampleRates.map(String.init).joined(separator: ", ")
      let curves = FadeCurve.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
      try db.execute(
        sql: """
          CREATE TABLE project (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            sampleRate INTEGER NOT NULL CHECK (sampleRate IN (\(rates))),
            channels INTEGER NOT NULL CHECK (channels IN (1, 2))
          );
          CREATE TABLE source (
            id INTEGER PRIMARY KEY CHECK (id > 0),
            path TEXT NOT NULL CHECK (path <> ''),
            contentHash TEXT NOT NULL,
            sampleRate INTEGER NOT NULL CHECK (sampleRate > 0),
            channels INTEGER NOT NULL CHECK (channels IN (1, 2)),
            frameCount INTEGER NOT NULL CHECK (frameCount > 0)
          );
          CREATE TABLE track (
            id INTEGER PRIMARY KEY CHECK (id > 0),
            position INTEGER NOT NULL,
            name TEXT NOT NULL CHECK (trim(name) <> ''),
            gainDB REAL NOT NULL CHECK (gainDB BETWEEN \(Gain.minimumDecibels) AND \(Gain.maximumDecibels)),
            pan REAL NOT NULL CHECK (pan BETWEEN -1 AND 1),
            muted INTEGER NOT NULL CHECK (muted IN (0, 1)),
            solo INTEGER NOT NULL CHECK (solo IN (0, 1))
          );
          CREATE TABLE clip (
            id INTEGER PRIMARY KEY CHECK (id > 0),
            trackID INTEGER NOT NULL REFERENCES track(id),
            sourceID INTEGER NOT NULL REFERENCES source(id),
            timelineStart INTEGER NOT NULL CHECK (timelineStart >= 0),
            sourceStart INTEGER NOT NULL CHECK (sourceStart >= 0),
            length INTEGER NOT NULL CHECK (length > 0),
            gainDB REAL NOT NULL CHECK (gainDB BETWEEN \(Gain.minimumDecibels) AND \(Gain.maximumDecibels)),
            fadeInLength INTEGER NOT NULL CHECK (fadeInLength >= 0),
            fadeInCurve TEXT NOT NULL CHECK (fadeInCurve IN (\(curves))),
            fadeOutLength INTEGER NOT NULL CHECK (fadeOutLength >= 0),
            fadeOutCurve TEXT NOT NULL CHECK (fadeOutCurve IN (\(curves))),
            CHECK (fadeInLength + fadeOutLength <= length)
          );
          CREATE INDEX clip_by_track ON clip(trackID);
          CREATE INDEX clip_by_source ON clip(sourceID);

          -- History: a tree of versions. Each holds the changeset from its parent to itself.
          -- jump is a skew-binary jump pointer (an ancestor) so ancestor and common-ancestor
          -- queries take O(log n) steps however long the history is.
          CREATE TABLE version (
            id INTEGER PRIMARY KEY,
            parent INTEGER REFERENCES version(id),
            jump INTEGER NOT NULL REFERENCES version(id),
            depth INTEGER NOT NULL CHECK (depth >= 0),
            label TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            coalescingKey TEXT,
            changeset BLOB NOT NULL,
            -- The head revision at which this changeset was last written (coalescing rewrites
            -- it), so another process can tell whether its snapshot of this version is stale.
            revision INTEGER NOT NULL,
            CHECK ((parent IS NULL) = (depth = 0))
          );
          CREATE INDEX version_by_parent ON version(parent);

          -- Where the project is: the head version, the tip redo leads to (the most recently
          -- visited descendant of head), and a revision bumped by every write, so another
          -- process can tell a coalesced commit from no change.
          CREATE TABLE head (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            version INTEGER NOT NULL REFERENCES version(id),
            tip INTEGER NOT NULL REFERENCES version(id),
            revision INTEGER NOT NULL
          );

          -- Never part of history: id allocation (ids are never reused, even after an undo) and
          -- transient state such as selection, playhead and view.
          CREATE TABLE id_sequence (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            nextSource INTEGER NOT NULL CHECK (nextSource > 0),
            nextTrack INTEGER NOT NULL CHECK (nextTrack > 0),
            nextClip INTEGER NOT NULL CHECK (nextClip > 0)
          );
          CREATE TABLE transient (
            key TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL
          );
          """)
    }
    migrator.registerMigration("v2") { db in
      try db.execute(
        sql: """
          -- History blocks (see HistoryBlocks): the net changes from version `start` down to its
          -- descendant `version`, `span` versions below, in NetChanges' compact encoding.
          CREATE TABLE history_block (
            version INTEGER NOT NULL REFERENCES version(id),
            span INTEGER NOT NULL CHECK (span > 1),
            start INTEGER NOT NULL REFERENCES version(id),
            changes BLOB NOT NULL,
            PRIMARY KEY (version, span)
          );
          """)
      // Projects made before blocks existed get them now, once: ancestors first (ids grow
      // down the tree), so each block finds the smaller ones it is built from.
      let blocks = HistoryBlocks.standard
      let versions = try Row.fetchAll(
        db,
        sql:
          "SELECT id, parent, jump, depth FROM version WHERE depth > 0 AND depth % ? = 0 ORDER BY id",
        arguments: [blocks.spans[0]])
      for row in versions {
        try VersionGraph.writeBlocks(
          at: VersionNode(
            id: try row.value("id", of: "version"), parent: try row.value("parent", of: "version"),
            jump: try row.value("jump", of: "version"), depth: try row.value("depth", of: "version")
          ),
          spans: blocks.spans, blocks: blocks, db)
      }
    }
    migrator.registerMigration("v3") { db in
      try db.execute(
        sql: """
          -- Versions whose large history blocks BlockBuilder has yet to build.
          CREATE TABLE history_block_pending (
            version INTEGER PRIMARY KEY REFERENCES version(id)
          );
          """)
    }
    migrator.registerMigration("v4") { db in
      try db.execute(
        sql: """
          -- Every move of the head, in the transaction that made it: what a subscriber needs
          -- to name each snapshot's cause and to miss none, however fast they come. Not
          -- history (undo never touches it).
          CREATE TABLE head_move (
            seq INTEGER PRIMARY KEY,
            fromVersion INTEGER REFERENCES version(id),
            toVersion INTEGER NOT NULL REFERENCES version(id),
            cause TEXT NOT NULL CHECK (cause IN ('new', 'edit', 'undo', 'redo', 'checkout')),
            createdAt INTEGER NOT NULL
          );
          """)
    }
    migrator.registerMigration("v5") { db in
      try db.execute(
        sql: """
          -- A track's volume automation (Envelope.storageText: frames:dB pairs); no row, none.
          CREATE TABLE envelope (
            trackID INTEGER PRIMARY KEY REFERENCES track(id),
            points TEXT NOT NULL CHECK (points <> '')
          );
          -- The gain of the whole mix; no row, 0 dB.
          CREATE TABLE master (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            gainDB REAL NOT NULL CHECK (gainDB BETWEEN \(Gain.minimumDecibels) AND \(Gain.maximumDecibels))
          );
          """)
    }
    migrator.registerMigration("v6") { db in
      let shapes = EnvelopeShape.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
      try db.execute(
        sql: """
          -- A track's volume automation as one row per point (EnvelopePointRow), each relative
          -- to the one before it, so a ripple edit changes one row, not every later point. The
          -- envelope rows of v5 stay as they are (their versions must keep applying to them);
          -- the store replaces a track's row with points when its envelope next changes.
          CREATE TABLE envelope_point (
            id INTEGER PRIMARY KEY CHECK (id > 0),
            trackID INTEGER NOT NULL REFERENCES track(id),
            previous INTEGER,
            gap INTEGER NOT NULL CHECK (gap >= 0),
            gainDB REAL CHECK (gainDB <= \(Gain.maximumDecibels)),
            shape TEXT NOT NULL CHECK (shape IN (\(shapes))),
            CHECK (id >> 32 = trackID)
          );
          CREATE INDEX envelope_point_by_track ON envelope_point(trackID);
          """)
    }
    migrator.registerMigration("v7") { db in
      try db.execute(
        sql: """
          -- Effect chains (EffectRow): one row per effect, on a track or (trackID NULL) on the
          -- master, at its index in the chain.
          CREATE TABLE effect (
            id INTEGER PRIMARY KEY CHECK (id > 0),
            trackID INTEGER REFERENCES track(id),
            position INTEGER NOT NULL CHECK (position >= 0),
            plugin TEXT NOT NULL CHECK (plugin <> ''),
            parameters TEXT NOT NULL,
            bypassed INTEGER NOT NULL CHECK (bypassed IN (0, 1)),
            state BLOB
          );
          CREATE INDEX effect_by_track ON effect(trackID);
          -- Effect ids, never reused (not history, like the other counters).
          CREATE TABLE effect_sequence (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            nextEffect INTEGER NOT NULL CHECK (nextEffect > 0)
          );
          INSERT INTO effect_sequence (id, nextEffect) VALUES (1, 1);
          """)
    }
    migrator.registerMigration("v8") { db in
      try db.execute(
        sql: """
          -- Markers (MarkerRow): a name at a frame of the timeline. Names are unique, which
          -- the model checks: a UNIQUE index would refuse a changeset that swaps two names
          -- row by row.
          CREATE TABLE marker (
            id INTEGER PRIMARY KEY CHECK (id > 0),
            position INTEGER NOT NULL CHECK (position >= 0),
            name TEXT NOT NULL CHECK (trim(name) <> '')
          );
          -- Marker ids, never reused (not history, like the other counters).
          CREATE TABLE marker_sequence (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            nextMarker INTEGER NOT NULL CHECK (nextMarker > 0)
          );
          INSERT INTO marker_sequence (id, nextMarker) VALUES (1, 1);
          """)
    }
    migrator.registerMigration("v9") { db in
      let curves = FadeCurve.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
      try db.execute(
        sql: """
          -- Named clipboards of `tape copy` (Clipboard). Not history, like transient state:
          -- undo, redo and checkout never touch them, and copying makes no version. Ids of
          -- tracks, sources and clips are plain numbers, no foreign keys: a clipboard outlives
          -- an undo that removes what it was copied from (a paste then says so).
          CREATE TABLE clipboard (
            name TEXT PRIMARY KEY NOT NULL CHECK (name <> ''),
            rangeStart INTEGER NOT NULL CHECK (rangeStart >= 0),
            length INTEGER NOT NULL CHECK (length > 0),
            version INTEGER NOT NULL,
            createdAt INTEGER NOT NULL
          );
          -- The tracks copied, in order, with the envelope over the range (storage text,
          -- times from the range's start; NULL for none).
          CREATE TABLE clipboard_track (
            clipboard TEXT NOT NULL REFERENCES clipboard(name),
            position INTEGER NOT NULL CHECK (position >= 0),
            trackID INTEGER NOT NULL CHECK (trackID > 0),
            envelope TEXT CHECK (envelope <> ''),
            PRIMARY KEY (clipboard, position),
            UNIQUE (clipboard, trackID)
          );
          -- The pieces: clips cut to the range, in timeline order, `offset` from its start.
          CREATE TABLE clipboard_clip (
            clipboard TEXT NOT NULL REFERENCES clipboard(name),
            position INTEGER NOT NULL CHECK (position >= 0),
            trackID INTEGER NOT NULL,
            copiedFrom INTEGER NOT NULL CHECK (copiedFrom > 0),
            sourceID INTEGER NOT NULL CHECK (sourceID > 0),
            offset INTEGER NOT NULL CHECK (offset >= 0),
            sourceStart INTEGER NOT NULL CHECK (sourceStart >= 0),
            length INTEGER NOT NULL CHECK (length > 0),
            gainDB REAL NOT NULL CHECK (gainDB BETWEEN \(Gain.minimumDecibels) AND \(Gain.maximumDecibels)),
            fadeInLength INTEGER NOT NULL CHECK (fadeInLength >= 0),
            fadeInCurve TEXT NOT NULL CHECK (fadeInCurve IN (\(curves))),
            fadeOutLength INTEGER NOT NULL CHECK (fadeOutLength >= 0),
            fadeOutCurve TEXT NOT NULL CHECK (fadeOutCurve IN (\(curves))),
            CHECK (fadeInLength + fadeOutLength <= length),
            PRIMARY KEY (clipboard, position),
            FOREIGN KEY (clipboard, trackID) REFERENCES clipboard_track(clipboard, trackID)
          );
          """)
    }
    migrator.registerMigration("v10") { db in
      try db.execute(
        sql: """
          -- Names of versions (`tape tag`, VersionTag). Not history, like the clipboards of v9:
          -- tagging makes no version, and undo, redo and checkout never touch them. A name is
          -- never all digits (it would read as a version number); the model checks the other
          -- rules. A prune drops or refuses the tags of the versions it drops (the foreign key).
          CREATE TABLE tag (
            name TEXT PRIMARY KEY NOT NULL CHECK (name GLOB '*[^0-9]*'),
            version INTEGER NOT NULL REFERENCES version(id),
            createdAt INTEGER NOT NULL
          );
          CREATE INDEX tag_by_version ON tag(version);
          """)
    }
    migrator.registerMigration("v11") { db in
      try db.execute(
        sql: """
          -- What a clip holds beyond its clip row (ClipDetailRow): its name (NULL for none;
          -- unique, which the model checks, as for markers), and the parts of its fades'
          -- curves that a range edit cut away, so that the audio that stays keeps its gain.
          -- No row for a clip without a name whose fades are whole.
          CREATE TABLE clip_detail (
            clipID INTEGER PRIMARY KEY REFERENCES clip(id),
            name TEXT CHECK (name <> ''),
            fadeInSilentCut INTEGER NOT NULL CHECK (fadeInSilentCut >= 0),
            fadeInFullCut INTEGER NOT NULL CHECK (fadeInFullCut >= 0),
            fadeOutSilentCut INTEGER NOT NULL CHECK (fadeOutSilentCut >= 0),
            fadeOutFullCut INTEGER NOT NULL CHECK (fadeOutFullCut >= 0)
          );
          -- A clipboard's pieces keep the cut parts of their fades too (not history: columns
          -- may be added here).
          ALTER TABLE clipboard_clip ADD COLUMN fadeInSilentCut INTEGER NOT NULL DEFAULT 0
            CHECK (fadeInSilentCut >= 0);
          ALTER TABLE clipboard_clip ADD COLUMN fadeInFullCut INTEGER NOT NULL DEFAULT 0
            CHECK (fadeInFullCut >= 0);
          ALTER TABLE clipboard_clip ADD COLUMN fadeOutSilentCut INTEGER NOT NULL DEFAULT 0
            CHECK (fadeOutSilentCut >= 0);
          ALTER TABLE clipboard_clip ADD COLUMN fadeOutFullCut INTEGER NOT NULL DEFAULT 0
            CHECK (fadeOutFullCut >= 0);
          """)
    }
    migrator.registerMigration("v12") { db in
      // History blocks of 262,144 versions (the third of HistoryBlocks.standard's spans): the
      // versions of a longer history that end one are queued, and the background builder
      // makes their blocks once the file is open for writing.
      try HistoryBlocks.standard.queueMissingBlocks(db)
    }
    migrator.registerMigration(pendingMoveMigration) { db in
      // A large history move's net change, not yet written to the tracked tables, the
      // version they hold and the head's revision when it was written (``PendingMove``): at
      // most one row.
      try db.execute(
        sql: """
          CREATE TABLE \(pendingMoveTable) (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            base INTEGER NOT NULL REFERENCES version(id),
            revision INTEGER NOT NULL,
            changes BLOB NOT NULL
          )
          """)
    }
    migrator.registerMigration(pendingTailMigration) { db in
      // A pending change stored bare (by v13's Tape) gets its checksum and versions.
      try PendingMove.upgradeBareRow(db)
      // The moves made since the pending move's row was written, composed (``PendingMove``):
      // a small move after a large one writes this instead of the large change again. At most
      // one row, and only beside a pending move.
      try db.execute(
        sql: """
          CREATE TABLE \(pendingTailTable) (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            revision INTEGER NOT NULL,
            changes BLOB NOT NULL
          )
          """)
    }
    migrator.registerMigration("v15") { db in
      try db.execute(
        sql: """
          -- Routing (TrackOutputRow): the track a track's sound goes to; no row, the master.
          CREATE TABLE track_output (
            trackID INTEGER PRIMARY KEY REFERENCES track(id),
            outputID INTEGER NOT NULL REFERENCES track(id) CHECK (outputID <> trackID)
          );
          -- Sends (SendRow): a copy of one track's sound into another, post-fader unless
          -- preFader. Loops are refused by the model (a path of several rows).
          CREATE TABLE send (
            id INTEGER PRIMARY KEY CHECK (id > 0),
            fromID INTEGER NOT NULL REFERENCES track(id),
            toID INTEGER NOT NULL REFERENCES track(id) CHECK (toID <> fromID),
            gainDB REAL NOT NULL CHECK (gainDB BETWEEN \(Gain.minimumDecibels) AND \(Gain.maximumDecibels)),
            pan REAL NOT NULL CHECK (pan BETWEEN -1 AND 1),
            preFader INTEGER NOT NULL CHECK (preFader IN (0, 1))
          );
          CREATE INDEX send_by_from ON send(fromID);
          -- Send ids, never reused (not history, like the other counters).
          CREATE TABLE send_sequence (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            nextSend INTEGER NOT NULL CHECK (nextSend > 0)
          );
          INSERT INTO send_sequence (id, nextSend) VALUES (1, 1);
          """)
    }
    migrator.registerMigration("v16") { db in
      try db.execute(
        sql: """
          -- Side chains (EffectSidechainRow): the track whose post-fader output feeds an
          -- effect's side-chain inputs; no row, none. Loops are refused by the model.
          CREATE TABLE effect_sidechain (
            effectID INTEGER PRIMARY KEY REFERENCES effect(id),
            sourceID INTEGER NOT NULL REFERENCES track(id)
          );
          """)
    }
    migrator.registerMigration("v17") { db in
      try db.execute(
        sql: """
          -- Automation of effect parameters (EffectAutomationRow): one row per effect that
          -- has any, its lanes by port symbol. No row, no automation.
          CREATE TABLE effect_automation (
            effectID INTEGER PRIMARY KEY REFERENCES effect(id),
            lanes TEXT NOT NULL CHECK (lanes <> '')
          );
          """)
    }
    migrator.registerMigration("v18") { db in
      try db.execute(
        sql: """
          -- Effects' files (EffectFileRow): the file each file parameter of an effect's plugin
          -- is set to (an impulse response), kept as a source's is. The id carries the effect.
          CREATE TABLE effect_file (
            id INTEGER PRIMARY KEY CHECK (id > 0),
            effectID INTEGER NOT NULL REFERENCES effect(id) CHECK ((id >> 16) = effectID),
            key TEXT NOT NULL CHECK (key <> ''),
            path TEXT NOT NULL CHECK (path <> ''),
            contentHash TEXT NOT NULL
          );
          CREATE INDEX effect_file_by_effect ON effect_file(effectID);
          """)
    }
    migrator.registerMigration("v19") { db in
      try db.execute(
        sql: """
          -- Automation lanes of tracks and sends (LaneRow): a track's pan lane or a send's
          -- envelope, its points as stored; no row, none. The id carries the owner.
          CREATE TABLE automation_lane (
            id INTEGER PRIMARY KEY CHECK (id > 0),
            trackID INTEGER REFERENCES track(id),
            sendID INTEGER REFERENCES send(id),
            points TEXT NOT NULL CHECK (points <> ''),
            CHECK ((trackID IS NULL) <> (sendID IS NULL)),
            CHECK (id = coalesce(trackID * 2, sendID * 2 + 1))
          );
          """)
    }
    migrator.registerMigration("v20") { db in
      try db.execute(
        sql: """
          -- What a clipboard copied of a track's automation lanes besides its envelope: its pan
          -- lane (sendID NULL) and each of its sends (sendID, toTrack) with the send's envelope
          -- over the range (points: storage text, times from the range's start; NULL for a
          -- send without one). A clipboard without rows (copied before v20) has none.
          CREATE TABLE clipboard_lane (
            clipboard TEXT NOT NULL REFERENCES clipboard(name),
            position INTEGER NOT NULL CHECK (position >= 0),
            trackID INTEGER NOT NULL CHECK (trackID > 0),
            sendID INTEGER CHECK (sendID > 0),
            toTrack INTEGER CHECK (toTrack > 0),
            points TEXT CHECK (points <> ''),
            CHECK ((sendID IS NULL) = (toTrack IS NULL)),
            CHECK (sendID IS NOT NULL OR points IS NOT NULL),
            PRIMARY KEY (clipboard, position)
          );
          -- Whether a clipboard keeps its lanes (1 for every one copied from now on): a paste
          -- of one kept before (0) leaves the target's lanes alone.
          ALTER TABLE clipboard ADD COLUMN lanes INTEGER NOT NULL DEFAULT 0 CHECK (lanes IN (0, 1));
          """)
    }
    migrator.registerMigration("v21") { db in
      try db.execute(
        sql: """
          -- Kept takes (TakeRow): the recorded alternatives of a range that do not play, each
          -- the clip it would be, keyed by that clip's id; the one that plays is a clip row
          -- (playingID, not a foreign key: a choice replaces it in the same version).
          CREATE TABLE take (
            id INTEGER PRIMARY KEY CHECK (id > 0),
            trackID INTEGER NOT NULL REFERENCES track(id),
            playingID INTEGER NOT NULL CHECK (playingID > 0 AND playingID <> id),
            rangeStart INTEGER NOT NULL CHECK (rangeStart >= 0),
            rangeLength INTEGER NOT NULL CHECK (rangeLength > 0),
            sourceID INTEGER NOT NULL REFERENCES source(id),
            timelineStart INTEGER NOT NULL CHECK (timelineStart >= 0),
            sourceStart INTEGER NOT NULL CHECK (sourceStart >= 0),
            length INTEGER NOT NULL CHECK (length > 0),
            gainDB REAL NOT NULL,
            fades TEXT NOT NULL
          );
          CREATE INDEX take_by_playing ON take(playingID);
          """)
    }
    return migrator
  }
}
