//! Capability contracts: manifests and version bumps, profiles, cursors,
//! caps, the scratchpad and the description lint.
