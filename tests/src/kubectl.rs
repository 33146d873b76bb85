//! The real `kubectl` binary, with a kubeconfig of its own whose `server`
//! is GRW's Kubernetes API and a discovery cache of its own.

use std::path::PathBuf;

use crate::daemon::Grw;

/// Where GRW serves the Kubernetes API by default (`kubeApiPathPrefix`).
pub const PREFIX: &str = "/kube";

/// `kubectl`, pointed at one GRW.
pub struct Kubectl {
    kubeconfig: PathBuf,
    cache: tempfile::TempDir,
}

impl Kubectl {
    /// For `grw`'s Kubernetes API, without credentials.
    pub fn for_grw(grw: &Grw) -> Kubectl {
        Kubectl::new(&format!("{}{PREFIX}", grw.url), None, None)
    }

    /// For the Kubernetes API at `server` (GRW's prefix included), sending
    /// `token` as its bearer token, and trusting the certificate authority
    /// `ca` (PEM) for an `https` server. kubectl sends a token only over
    /// TLS.
    pub fn new(server: &str, token: Option<&str>, ca: Option<&str>) -> Kubectl {
        let cache = tempfile::tempdir().unwrap();
        let kubeconfig = cache.path().join("kubeconfig");
        let user = match token {
            Some(token) => format!("{{token: {token}}}"),
            None => "{}".to_string(),
        };
        let mut cluster = format!("    server: {server}\n");
        if let Some(ca) = ca {
            let file = cache.path().join("ca.crt");
            std::fs::write(&file, ca).unwrap();
            cluster.push_str(&format!("    certificate-authority: {}\n", file.display()));
        }
        let config = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: grw\n  cluster:\n{cluster}contexts:\n- name: grw\n  context: {{cluster: grw, user: reader}}\ncurrent-context: grw\nusers:\n- name: reader\n  user: {user}\n"
        );
        std::fs::write(&kubeconfig, config).unwrap();
        Kubectl { kubeconfig, cache }
    }

    /// `kubectl ARGS` with this kubeconfig and cache, killed if dropped.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new("kubectl");
        command
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.cache.path().join("discovery"))
            .args(args)
            .env_remove("KUBECONFIG")
            .kill_on_drop(true);
        command
    }

    /// Runs kubectl to its end; its standard output, or a panic with both
    /// outputs if it failed.
    pub async fn run(&self, args: &[&str]) -> String {
        let output = self
            .command(args)
            .output()
            .await
            .expect("kubectl runs (the tests need it, see the README)");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            output.status.success(),
            "kubectl {args:?} failed:\n{stdout}\n{stderr}"
        );
        stdout
    }

    /// Runs kubectl expecting it to fail; its standard error.
    pub async fn fail(&self, args: &[&str]) -> String {
        let output = self.command(args).output().await.unwrap();
        assert!(!output.status.success(), "kubectl {args:?} succeeded");
        String::from_utf8_lossy(&output.stderr).into_owned()
    }
}
