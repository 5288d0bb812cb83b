//! An HTTP request to the fleet API, as bytes on the wire: read with
//! httparse (hyper's own request-line and header parser), then through
//! every check of clusterd's that needs no etcd: the `Host` guard, page
//! tokens, a PUT's body and fleet's order of decisions for a new and for an
//! existing unit, a PATCH of machine metadata. Properties: nothing panics;
//! every refusal is a 4xx with a message; a page token that reads as a key
//! is the token of that key; a unit a PUT would create is stored with the
//! hash of its options, and PUT again it changes nothing but its state.
#![no_main]

use flotilla_cluster::model::StoredUnit;
use flotilla_cluster::serve::host_allowed;
use flotilla_cluster::validate::{
    decide_put, page_token, parse_page_token, parse_patch, parse_put, ApiError, PutAction,
};
use flotilla_systemd::unit_hash;
use libfuzzer_sys::fuzz_target;

fn refused(e: &ApiError) {
    assert!((400..500).contains(&e.code), "{e:?}");
    assert!(!e.message.is_empty());
}

fuzz_target!(|data: &[u8]| {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    let Ok(httparse::Status::Complete(head)) = req.parse(data) else {
        return;
    };
    let body = data.get(head..).unwrap_or_default();
    let header = |name: &str| {
        req.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .and_then(|h| std::str::from_utf8(h.value).ok())
    };
    if let Some(host) = header("host") {
        let _ = host_allowed(host);
    }
    let path = req.path.unwrap_or("/");
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    for token in query.split('&').filter_map(|p| p.strip_prefix("nextPageToken=")) {
        for kind in ["units", "states", "machines"] {
            match parse_page_token(kind, token) {
                Ok(last) => assert_eq!(parse_page_token(kind, &page_token(kind, &last)), Ok(last)),
                Err(e) => refused(&e),
            }
        }
    }
    match (req.method, route.strip_prefix("/fleet/v1/")) {
        (Some("PUT"), Some(r)) if r.starts_with("units/") => {
            let name = &r["units/".len()..];
            let put = match parse_put(name, header("content-type"), body) {
                Ok(put) => put,
                Err(e) => return refused(&e),
            };
            match decide_put(name, &put, None) {
                Ok(PutAction::Create { unit, .. }) => {
                    assert_eq!(unit.name, name);
                    assert_eq!(unit.hash, unit_hash(&unit.options));
                    // The same body again, the unit now stored.
                    match decide_put(name, &put, Some(&unit)) {
                        Ok(PutAction::SetDesired(_)) => {}
                        Err(e) => refused(&e),
                        Ok(other) => panic!("a second PUT of the same unit gave {other:?}"),
                    }
                }
                Ok(other) => panic!("a PUT of a new unit gave {other:?}"),
                Err(e) => refused(&e),
            }
            let stored = StoredUnit {
                name: name.to_string(),
                hash: String::new(),
                options: Vec::new(),
            };
            if let Err(e) = decide_put(name, &put, Some(&stored)) {
                refused(&e);
            }
        }
        (Some("PATCH"), Some("machines")) => {
            if let Err(e) = parse_patch(body) {
                refused(&e);
            }
        }
        _ => {}
    }
});
