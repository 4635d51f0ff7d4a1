//! TLS for registries: rustls (ring) with the system's root certificates plus `--ca-file`.

use super::Fault;
use rustls::RootCertStore;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use std::path::Path;
use std::sync::Arc;

/// A client configuration trusting the system roots and every certificate in `ca_file`.
pub fn client_config(ca_file: Option<&Path>) -> Result<Arc<rustls::ClientConfig>, Fault> {
    let mut roots = RootCertStore::empty();
    // Unreadable system certificates are skipped; a registry they were needed for then fails
    // its handshake with a message naming it.
    let native = rustls_native_certs::load_native_certs();
    for cert in native.certs {
        let _ = roots.add(cert);
    }
    if let Some(path) = ca_file {
        let bad =
            |message: String| Fault::malformed(format!("--ca-file {}", path.display()), message);
        let pem = crate::input::read_file(path, crate::input::MAX_TEXT)
            .map_err(|e| bad(e.to_string()))?;
        let certs = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(e.to_string()))?;
        if certs.is_empty() {
            return Err(bad("no PEM certificates".into()));
        }
        for cert in certs {
            roots.add(cert).map_err(|e| bad(e.to_string()))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Fault::Http(format!("TLS set-up: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}
