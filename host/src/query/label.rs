//! Label selectors.
