//! A fake Kubernetes API server.
