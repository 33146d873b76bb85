//! Certificates for the TLS listener's tests.

/// A certificate authority and a server certificate for `localhost` and
/// 127.0.0.1 it signed, as PEM: (CA certificate, certificate, key).
pub fn certificates(authority: &str) -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, authority);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let params =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let certificate = params.signed_by(&key, &ca, &ca_key).unwrap();
    (ca.pem(), certificate.pem(), key.serialize_pem())
}
