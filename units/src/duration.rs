//! Durations as unit files write them: `500ms`, `2s`, `1m`, `1h`, or a bare
//! number of seconds.
