//! One test per cell of the lifecycle table.
