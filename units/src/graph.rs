//! The target graph.
