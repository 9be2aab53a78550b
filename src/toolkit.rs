//! Inspecting a CUDA tree on disk (placeholder, filled by the link work).
