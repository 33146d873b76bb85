//! Certificates for the TLS tests.

use rcgen::{BasicConstraints, Certificate, CertificateParams, DnType, IsCa, KeyPair};

/// A certificate authority named `name`, and its key.
pub fn authority(name: &str) -> (Certificate, KeyPair) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let certificate = params.self_signed(&key).unwrap();
    (certificate, key)
}

/// A certificate authority and a server certificate for `localhost` and
/// 127.0.0.1 it signed, as PEM: (CA certificate, certificate, key).
pub fn certificates(authority_name: &str) -> (String, String, String) {
    let (ca, ca_key) = authority(authority_name);
    let key = KeyPair::generate().unwrap();
    let params =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let certificate = params.signed_by(&key, &ca, &ca_key).unwrap();
    (ca.pem(), certificate.pem(), key.serialize_pem())
}
