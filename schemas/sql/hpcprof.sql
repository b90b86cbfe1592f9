-- SPDX-License-Identifier: MIT
-- hpcprof trace schema. The single source of truth for the .hpcprof SQLite file; the C++
-- constants in schemas/include/hpcprof/schema/tables.hpp are checked against it by a unit test.
--
-- Conventions: times are integer nanoseconds on one clock domain (`ts` = start, `dur` = length),
-- counted from the trace's time origin (metadata `time_origin_realtime_ns` is the wall-clock time
-- of ts 0). Tables are singular snake_case; `id INTEGER PRIMARY KEY`; references are `<table>_id`.
-- Tables may change between versions; the views at the end (event_view, counter_view,
-- stats_view) are the stable query surface for users and CI scripts.

PRAGMA application_id = 1213219654; -- 0x48504346, "HPCF"
PRAGMA user_version = 3;            -- schema version; readers refuse versions they do not know
                                    -- (version 2, before event.offset, is still read: docs/trace-schema.md)

-- Facts about the whole trace, one row per key.
CREATE TABLE metadata (
    key TEXT PRIMARY KEY,  -- e.g. schema_version, hpcprof_version, command, clock_method
    value TEXT NOT NULL    -- value as text
) WITHOUT ROWID;

-- Interned strings: event names, file paths, communicator keys.
CREATE TABLE string (
    id INTEGER PRIMARY KEY, -- string id referenced by other tables
    value TEXT NOT NULL     -- the string itself, unique within the table
);

-- Fine event categories and the attribution class each belongs to.
CREATE TABLE category (
    id INTEGER PRIMARY KEY, -- category id (stable across versions, see categories.def)
    name TEXT NOT NULL,     -- e.g. posix_io, mpi_collective, gpu_kernel
    class TEXT NOT NULL     -- compute | communication | io | memory | sync | setup | annotation
);

-- One row per recorded process: MPI ranks, their helpers, forked and exec'ed children.
CREATE TABLE process (
    id INTEGER PRIMARY KEY,   -- process id within the trace
    rank INTEGER,             -- world rank; NULL for non-rank processes (launchers, helpers)
    world_size INTEGER,       -- number of ranks in the job, NULL if unknown
    local_rank INTEGER,       -- rank within the node, NULL if unknown
    rank_source TEXT,         -- where the rank came from: MPI, OMPI_COMM_WORLD_RANK, PMI_RANK, ...
    host TEXT NOT NULL,       -- host name
    pid INTEGER NOT NULL,     -- operating-system process id
    ppid INTEGER,             -- parent's operating-system process id
    parent_process_id INTEGER,-- process.id of the recorded parent (fork), NULL if not recorded
    command TEXT,             -- command line, arguments separated by spaces
    exe TEXT,                 -- executable path
    start_ts INTEGER NOT NULL,-- when the agent started in this process
    end_ts INTEGER,           -- when the process ended (last record if it never exited cleanly)
    end_state TEXT NOT NULL,  -- exited | quick_exit | exec | abnormal (killed, crashed)
    exit_code INTEGER,        -- exit status when known
    clock_method TEXT NOT NULL, -- how this process's clock was mapped: monotonic, realtime, mpi_pingpong
    clock_offset_ns INTEGER NOT NULL, -- ns added to this process's local time to reach trace time
    clock_drift_ppb INTEGER NOT NULL, -- linear drift correction applied, parts per billion
    clock_uncertainty_ns INTEGER,     -- uncertainty of the offset (half the round trip), NULL if n/a
    raw_dir TEXT,             -- raw folder this process was loaded from
    cwd TEXT                  -- working directory the process started in, NULL if not recorded
);

-- Operating-system threads of a process. A thread whose raw file could not grow (full disk,
-- exhausted quota, file error) or reached the per-thread limit stopped recording at
-- recording_stopped_ts: nothing after that moment is in the trace for it (the analysis ends its
-- window there), and the trace's metadata says partial.
CREATE TABLE thread (
    id INTEGER PRIMARY KEY,  -- thread id within the trace
    process_id INTEGER NOT NULL, -- owning process
    tid INTEGER NOT NULL,    -- operating-system thread id
    name TEXT,               -- thread name when known
    recording_stopped_ts INTEGER, -- when the thread stopped recording (its first record lost to stop_reason), ns; NULL = recorded to its end
    stop_reason TEXT,        -- why it stopped: disk_full | quota | file_error | buffer_limit; NULL when it did not
    records_dropped INTEGER NOT NULL DEFAULT 0 -- records of this thread hpcprof could not write, any reason (the stats table has them by reason)
);

-- A timeline lane: a CPU thread, a GPU stream, a NIC queue pair. Events of one track occupy a
-- contiguous range of event ids sorted by ts, so [first_event_id, last_event_id] bounds them.
CREATE TABLE track (
    id INTEGER PRIMARY KEY,
    process_id INTEGER NOT NULL, -- owning process
    thread_id INTEGER,           -- CPU thread for cpu_thread tracks
    kind TEXT NOT NULL,          -- cpu_thread | gpu_stream | nic_queue
    name TEXT NOT NULL,          -- display name, e.g. "thread 1234", "GPU 0 stream 7"
    device INTEGER,              -- GPU or NIC index, NULL for CPU tracks
    stream INTEGER,              -- GPU stream or queue-pair number
    first_event_id INTEGER,      -- smallest event id on this track, NULL when empty
    last_event_id INTEGER,       -- largest event id on this track
    event_count INTEGER NOT NULL DEFAULT 0 -- number of events on this track
);

-- What an event acted on: a file, a pipe, a socket, a device.
CREATE TABLE object (
    id INTEGER PRIMARY KEY,
    name_id INTEGER NOT NULL, -- string: path, or "pipe:[inode]", "socket:[inode]", "<fd 1>"
    kind TEXT NOT NULL        -- file | pipe | socket | device | procfs | shm | directory | other | unknown
);

-- Communicators (MPI, NCCL): the key is the same on every member so instances match.
CREATE TABLE communicator (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,        -- identity shared by all members, e.g. "MPI_COMM_WORLD"
    size INTEGER,             -- number of members
    kind TEXT                 -- mpi | nccl
);

-- Every recorded call, GPU activity or range. Kept narrow: rare optional facts live in
-- event_detail; the offset of positioned I/O (one I/O call in three or more) is a column here,
-- so such a call is one row, not two (schema version 3).
CREATE TABLE event (
    id INTEGER PRIMARY KEY,
    track_id INTEGER NOT NULL,   -- the lane
    ts INTEGER NOT NULL,         -- start, ns
    dur INTEGER NOT NULL,        -- duration, ns (0 for instants)
    category_id INTEGER NOT NULL,-- fine category (category.id)
    name_id INTEGER NOT NULL,    -- string: the function name the program called, kernel name, ...
    depth INTEGER NOT NULL,      -- nesting depth on the track (0 = outermost)
    bytes INTEGER,               -- bytes transferred (the call's result), NULL if not applicable
    object_id INTEGER,           -- object.id (the file for I/O), NULL if none
    peer INTEGER,                -- partner world rank, NULL if none
    communicator_id INTEGER,     -- communicator.id for collectives, NULL if none
    seq INTEGER,                 -- per-communicator sequence number of a collective
    correlation_id INTEGER,      -- joins an API call to the GPU work it launched
    count INTEGER,               -- number of calls folded into this event (polls), NULL = 1
    offset INTEGER               -- file offset of positioned calls (pread, pwrite), NULL if none
);

-- Calls a thread was still inside when its process was last seen (killed, crashed, hung and
-- stopped by hpcprof run --timeout, or still running): the event ends when the process was last
-- seen (docs/trace-schema.md). One row per such event. Traces written before it lack the table.
CREATE TABLE event_unfinished (
    event_id INTEGER PRIMARY KEY, -- event.id
    requested_bytes INTEGER       -- bytes the call asked for (read/write count, message size)
);

-- Rare optional per-event facts, one row only for events that have any. (Version 2 traces also
-- kept the offset of positioned calls here; version 3 keeps it in event.offset.)
CREATE TABLE event_detail (
    event_id INTEGER PRIMARY KEY, -- event.id
    errno INTEGER,                -- errno of a failed call
    fd INTEGER,                   -- file descriptor, for failed calls and descriptor-only events
    tag INTEGER                   -- message tag
);

-- Free-form attributes of an event that do not deserve a column: a memcpy's direction and
-- memory kinds, a kernel's grid, an NCCL call's datatype. Keys are documented per source in
-- docs/trace-schema.md.
CREATE TABLE event_arg (
    event_id INTEGER NOT NULL, -- event.id
    key TEXT NOT NULL,         -- attribute name, e.g. copy_kind, grid, datatype
    value,                     -- integer, real or text
    PRIMARY KEY (event_id, key)
) WITHOUT ROWID;

-- MPI non-blocking requests completed by a wait or test (MPI_Wait*, MPI_Test*): one row per
-- completed send or receive request, naming the call that posted it (MPI_Isend, MPI_Irecv,
-- MPI_Start, ...). The completing event's own bytes/tag keep the totals. Matching a posted
-- receive to its send needs the actual source and tag, which only the completion knows.
CREATE TABLE mpi_completion (
    event_id INTEGER NOT NULL,  -- the completing call (event.id of an MPI_Wait* / MPI_Test* / MPI_Sendrecv*)
    request INTEGER NOT NULL,   -- per-process request number (0, 1, ... in posting order)
    post_event_id INTEGER,      -- event.id of the posting call (MPI_Sendrecv*: itself), NULL if not recorded
    kind TEXT NOT NULL,         -- 'send' or 'recv'
    peer INTEGER,               -- partner world rank; receives: the actual source, NULL if unknown
    tag INTEGER,                -- message tag; receives: the actual tag
    bytes INTEGER,              -- bytes sent; receives: bytes received; NULL if unknown
    PRIMARY KEY (event_id, request)
) WITHOUT ROWID;

-- Counter lanes (hardware or software counters, per thread or per process).
CREATE TABLE counter_track (
    id INTEGER PRIMARY KEY,
    process_id INTEGER NOT NULL, -- owning process
    thread_id INTEGER,           -- thread, NULL for process-wide counters
    name TEXT NOT NULL,          -- e.g. task_clock, PAPI_TOT_INS
    unit TEXT NOT NULL           -- ns, count, bytes, ...
);

-- Counter samples: the running total of a cumulative counter at ts.
CREATE TABLE counter (
    id INTEGER PRIMARY KEY,
    counter_track_id INTEGER NOT NULL, -- counter_track.id
    ts INTEGER NOT NULL,               -- sample time, ns
    value REAL NOT NULL                -- value at ts
);

-- Data-quality counters: one row per known stat, always present, value 0 when clean.
CREATE TABLE stats (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,        -- e.g. records_dropped
    severity TEXT NOT NULL,    -- info | data_loss | error
    source TEXT NOT NULL,      -- capture | store | import | analysis
    value INTEGER NOT NULL,    -- total over the trace
    description TEXT NOT NULL  -- what the counter means
);

-- Per-process break-down of non-zero stats.
CREATE TABLE stats_by_process (
    stats_id INTEGER NOT NULL,   -- stats.id
    process_id INTEGER NOT NULL, -- process.id
    value INTEGER NOT NULL,      -- this process's share
    PRIMARY KEY (stats_id, process_id)
) WITHOUT ROWID;

-- ---------------------------------------------------------------------------------------------
-- Stable query surface. Column names and meanings here do not change within a major version.
-- ---------------------------------------------------------------------------------------------

-- One row per event with everything a script needs, names resolved.
CREATE VIEW event_view AS
SELECT
    e.id AS event_id,            -- event.id
    p.rank AS rank,              -- world rank, NULL for non-rank processes
    p.pid AS pid,                -- operating-system process id
    th.tid AS tid,               -- operating-system thread id, NULL for GPU/NIC tracks
    t.name AS track,             -- lane name
    t.kind AS track_kind,        -- cpu_thread | gpu_stream | nic_queue
    c.name AS category,          -- fine category
    c.class AS class,            -- compute | communication | io | memory | sync | setup | annotation
    s.value AS name,             -- function / kernel / range name
    e.ts AS ts_ns,               -- start, ns since the trace origin
    e.dur AS dur_ns,             -- duration, ns
    e.bytes AS bytes,            -- bytes transferred, NULL if n/a
    e.peer AS peer,              -- partner world rank, NULL if none
    os.value AS object,          -- file path (I/O), object name
    o.kind AS object_kind,       -- file | pipe | socket | device | procfs | shm | ...
    cm.key AS communicator,      -- communicator key, NULL if none
    e.seq AS seq,                -- per-communicator sequence number
    e.correlation_id AS correlation_id,
    COALESCE(e.count, 1) AS count, -- calls folded into this row
    e.depth AS depth,            -- nesting depth on the lane
    p.host AS host,              -- host name
    p.id AS process_id,          -- process.id
    e.track_id AS track_id,      -- track.id
    (eu.event_id IS NOT NULL) AS unfinished -- 1: the call had not returned (event_unfinished)
FROM event e
JOIN track t ON t.id = e.track_id
JOIN process p ON p.id = t.process_id
LEFT JOIN thread th ON th.id = t.thread_id
JOIN category c ON c.id = e.category_id
JOIN string s ON s.id = e.name_id
LEFT JOIN object o ON o.id = e.object_id
LEFT JOIN string os ON os.id = o.name_id
LEFT JOIN communicator cm ON cm.id = e.communicator_id
LEFT JOIN event_unfinished eu ON eu.event_id = e.id;

-- One row per counter sample.
CREATE VIEW counter_view AS
SELECT
    p.rank AS rank,      -- world rank, NULL for non-rank processes
    p.pid AS pid,        -- operating-system process id
    th.tid AS tid,       -- thread, NULL for process-wide counters
    ct.name AS counter,  -- counter name
    ct.unit AS unit,     -- unit of value
    c.ts AS ts_ns,       -- sample time, ns since the trace origin
    c.value AS value     -- running total (cumulative counters) or level
FROM counter c
JOIN counter_track ct ON ct.id = c.counter_track_id
JOIN process p ON p.id = ct.process_id
LEFT JOIN thread th ON th.id = ct.thread_id;

-- Data-quality problems, worst first.
CREATE VIEW stats_view AS
SELECT name, severity, source, value, description
FROM stats
ORDER BY CASE severity WHEN 'error' THEN 0 WHEN 'data_loss' THEN 1 ELSE 2 END, name;
