//! API request validation as pure functions: the exact order of checks of
//! `PUT /fleet/v1/units/<name>` (docs/fleet-compat.md), page tokens, and
//! `PATCH /fleet/v1/machines` operations.

use crate::model::{ClusterState, StoredUnit};
use crate::requirements::validate_options;
use flotilla_systemd::{canonical_text, unit_hash};
use flotilla_units::fleet::UnitOption;
use flotilla_units::fleet_api;
use flotilla_units::unit_name::{is_template, validate_unit_name};

/// The largest unit file accepted (its canonical text). A unit's file is
/// copied into the schedule key of every machine it runs on and read by
/// the engine and the API in pages: it must stay small.
pub const MAX_UNIT_BYTES: usize = 64 * 1024;

/// The options' own checks ([`validate_options`]), after their size.
fn check_unit(name: &str, options: &[UnitOption]) -> Result<(), ApiError> {
    let size = canonical_text(options).len();
    if size > MAX_UNIT_BYTES {
        return Err(ApiError::new(
            400,
            format!(
                "invalid unit options: the unit file is {size} bytes long; the limit is {MAX_UNIT_BYTES}"
            ),
        ));
    }
    validate_options(name, options)
        .map_err(|e| ApiError::new(400, format!("invalid unit options: {e}")))
}

/// An API error: the HTTP status and the message for `{"error":{...}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// For people.
    pub message: String,
}

impl ApiError {
    /// An error with `code`.
    pub fn new(code: u16, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
        }
    }
}

/// A decoded PUT body ([`flotilla_units::fleet_api::PutBody`] on the wire),
/// its options as the unit-file model holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PutBody {
    /// The desired state, any string (checked later).
    pub desired_state: Option<String>,
    /// The unit file.
    pub options: Option<Vec<UnitOption>>,
}

/// What a valid PUT does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutAction {
    /// A new unit (201).
    Create {
        /// The unit file.
        unit: StoredUnit,
        /// Its desired state (`inactive` when not given).
        desired: ClusterState,
    },
    /// New contents for an existing unit (201).
    Replace {
        /// The new unit file.
        unit: StoredUnit,
        /// Its desired state: the body's, `inactive` when not given (fleet's
        /// `CreateUnit` stores a replacement as a new unit: fleetctl's
        /// `--replace` waits for it to pass through `inactive`).
        desired: ClusterState,
    },
    /// Only the desired state changes (204).
    SetDesired(ClusterState),
}

/// Checks that are made before the store is read: content type (415),
/// body decodes (400), body name equals the URL's (400), name valid (400).
pub fn parse_put(
    url_name: &str,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<PutBody, ApiError> {
    let ct_ok = content_type
        .and_then(|ct| ct.split(';').next())
        .is_some_and(|ct| ct.trim().eq_ignore_ascii_case("application/json"));
    if !ct_ok {
        return Err(ApiError::new(415, "expected Content-Type application/json"));
    }
    let body: fleet_api::PutBody = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(400, format!("unable to decode body: {e}")))?;
    if let Some(n) = &body.name {
        if !n.is_empty() && n != url_name {
            return Err(ApiError::new(
                400,
                format!("name in body {n:?} does not match name in URL {url_name:?}"),
            ));
        }
    }
    validate_unit_name(url_name).map_err(|e| ApiError::new(400, e))?;
    Ok(PutBody {
        desired_state: body.desired_state,
        options: body
            .options
            .map(|o| o.iter().map(UnitOption::from).collect()),
    })
}

fn parse_desired(s: &str) -> Result<ClusterState, ApiError> {
    ClusterState::parse(s).ok_or_else(|| {
        ApiError::new(
            400,
            format!("invalid desiredState {s:?}: must be inactive, loaded or launched"),
        )
    })
}

fn check_template(name: &str, desired: ClusterState) -> Result<(), ApiError> {
    if is_template(name) && desired != ClusterState::Inactive {
        return Err(ApiError::new(
            400,
            format!("unable to activate template unit {name}: it can only be inactive"),
        ));
    }
    Ok(())
}

/// The checks that need the stored unit, in fleet's order: new unit without
/// options (409), invalid options (400), create (201); different options
/// replace (201); no desiredState (409); template activated (400); set (204).
pub fn decide_put(
    name: &str,
    body: &PutBody,
    existing: Option<&StoredUnit>,
) -> Result<PutAction, ApiError> {
    let options = body.options.as_deref().unwrap_or(&[]);
    let Some(existing) = existing else {
        if options.is_empty() {
            return Err(ApiError::new(
                409,
                "unit does not exist and options field is empty",
            ));
        }
        check_unit(name, options)?;
        let desired = match &body.desired_state {
            Some(s) => parse_desired(s)?,
            None => ClusterState::Inactive,
        };
        check_template(name, desired)?;
        let unit = StoredUnit {
            name: name.to_string(),
            hash: unit_hash(options),
            options: options.to_vec(),
        };
        return Ok(PutAction::Create { unit, desired });
    };
    if !options.is_empty() {
        let hash = unit_hash(options);
        if hash != existing.hash {
            check_unit(name, options)?;
            let desired = match &body.desired_state {
                Some(s) => parse_desired(s)?,
                None => ClusterState::Inactive,
            };
            check_template(name, desired)?;
            let unit = StoredUnit {
                name: name.to_string(),
                hash,
                options: options.to_vec(),
            };
            return Ok(PutAction::Replace { unit, desired });
        }
    }
    let Some(s) = &body.desired_state else {
        return Err(ApiError::new(409, "unit exists and desiredState is empty"));
    };
    let desired = parse_desired(s)?;
    check_template(name, desired)?;
    Ok(PutAction::SetDesired(desired))
}

/// The desired state a PUT sets when its answer does not depend on the
/// stored unit beyond its existence: no options, and a valid desired state
/// that activates no template. Such a PUT is `204` if the unit exists and
/// `409` (no options for a new unit) if not, so the API writes it guarded
/// by "the unit exists" without reading it first. `None` for any other
/// body ([`decide_put`] with the stored unit decides those).
pub fn set_desired_only(name: &str, body: &PutBody) -> Option<ClusterState> {
    if body.options.as_ref().is_some_and(|o| !o.is_empty()) {
        return None;
    }
    let desired = parse_desired(body.desired_state.as_deref()?).ok()?;
    check_template(name, desired).ok()?;
    Some(desired)
}

const TOKEN_PREFIX: &str = "flotilla-page-v2:";

/// The longest page token accepted (hex of the prefix, the kind and the
/// longest key: a 256-character unit name and a 128-character machine ID).
const MAX_TOKEN: usize = 1024;

/// An opaque page token of listing `kind`: the next page starts after the
/// item whose key is `last`. Keys, not offsets, so that a page never
/// repeats or skips an item when others are added or removed meanwhile.
pub fn page_token(kind: &str, last: &str) -> String {
    format!("{TOKEN_PREFIX}{kind}:{last}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Reads a page token of listing `kind` (the key of the last item served);
/// a bad one is a 400.
pub fn parse_page_token(kind: &str, token: &str) -> Result<String, ApiError> {
    let bad = || ApiError::new(400, "invalid value of nextPageToken query parameter");
    if !token.len().is_multiple_of(2) || token.len() > MAX_TOKEN {
        return Err(bad());
    }
    let bytes: Option<Vec<u8>> = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(token.get(i..i + 2)?, 16).ok())
        .collect();
    let text = String::from_utf8(bytes.ok_or_else(bad)?).map_err(|_| bad())?;
    let rest = text.strip_prefix(TOKEN_PREFIX).ok_or_else(bad)?;
    let (k, last) = rest.split_once(':').ok_or_else(bad)?;
    if k != kind || last.is_empty() {
        return Err(bad());
    }
    Ok(last.to_string())
}

/// A validated metadata change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataChange {
    /// The machine.
    pub machine: String,
    /// The key.
    pub key: String,
    /// The new value; `None` removes the key.
    pub value: Option<String>,
}

/// A field of a JSON object as Go's `encoding/json` finds it for a struct
/// field named `name`: the key spelt exactly, else any key equal to it
/// without regard to case (fleet's client sends `"Value"`, its server's
/// struct field has no tag: docs/fleet-compat.md "API v1 on the wire").
fn go_field<'a>(
    obj: &'a serde_json::Map<String, serde_json::Value>,
    name: &str,
) -> Option<&'a serde_json::Value> {
    obj.get(name).or_else(|| {
        obj.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
}

/// A string field as Go decodes it into a `string`: missing or `null` is
/// empty, anything but a string does not decode.
fn go_string(
    obj: &serde_json::Map<String, serde_json::Value>,
    name: &str,
) -> Result<String, ApiError> {
    match go_field(obj, name) {
        None | Some(serde_json::Value::Null) => Ok(String::new()),
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(ApiError::new(
            400,
            format!("unable to decode body: {name} is {other}, not a string"),
        )),
    }
}

/// One operation of a `PATCH /machines` body, decoded as fleet's server
/// decoded it (`{"op","path","value":{"value"}}`, keys in any case,
/// unknown keys ignored, a missing `value` empty).
fn go_metadata_op(v: &serde_json::Value) -> Result<(String, String, String), ApiError> {
    let not_object = |what: &str| {
        ApiError::new(
            400,
            format!("unable to decode body: {what} is not an object"),
        )
    };
    let op = match v {
        serde_json::Value::Object(o) => o,
        serde_json::Value::Null => return Ok(Default::default()),
        _ => return Err(not_object("an operation")),
    };
    let value = match go_field(op, "Value") {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::Object(inner)) => go_string(inner, "value")?,
        Some(_) => return Err(not_object("value")),
    };
    Ok((go_string(op, "op")?, go_string(op, "path")?, value))
}

/// Validates every operation before any is applied, in fleet's order and
/// with its messages: the body decodes, then for each operation its op,
/// its path and (for `add` and `replace`) a non-empty value.
pub fn parse_patch(body: &[u8]) -> Result<Vec<MetadataChange>, ApiError> {
    let ops: Vec<serde_json::Value> = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(400, format!("unable to decode body: {e}")))?;
    let ops = ops
        .iter()
        .map(go_metadata_op)
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::with_capacity(ops.len());
    for (op, path, value) in ops {
        if !matches!(op.as_str(), "add" | "remove" | "replace") {
            return Err(ApiError::new(
                400,
                "invalid op: expect add, remove, or replace",
            ));
        }
        let parsed = path
            .strip_prefix('/')
            .and_then(|p| p.split_once("/metadata/"))
            .filter(|(m, k)| {
                crate::keys::valid_machine_id(m)
                    && !k.is_empty()
                    && k.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
            });
        let Some((machine, key)) = parsed else {
            return Err(ApiError::new(400, "machine metadata path invalid"));
        };
        let value = if op == "remove" {
            None
        } else if value.is_empty() {
            return Err(ApiError::new(
                400,
                "invalid value: add and replace require a value",
            ));
        } else {
            Some(value)
        };
        out.push(MetadataChange {
            machine: machine.to_string(),
            key: key.to_string(),
            value,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: Option<&str> = Some("application/json");

    fn stored(name: &str, exec: &str) -> StoredUnit {
        let options = vec![UnitOption {
            section: "Service".into(),
            name: "ExecStart".into(),
            value: exec.into(),
        }];
        StoredUnit {
            name: name.into(),
            hash: unit_hash(&options),
            options,
        }
    }

    fn put(
        name: &str,
        ct: Option<&str>,
        body: &str,
        existing: Option<&StoredUnit>,
    ) -> Result<PutAction, u16> {
        let b = parse_put(name, ct, body.as_bytes()).map_err(|e| e.code)?;
        decide_put(name, &b, existing).map_err(|e| e.code)
    }

    fn code(r: Result<PutAction, u16>) -> u16 {
        match r {
            Ok(PutAction::Create { .. }) | Ok(PutAction::Replace { .. }) => 201,
            Ok(PutAction::SetDesired(_)) => 204,
            Err(c) => c,
        }
    }

    /// A PUT written without reading the unit gets the answer it would
    /// get with the unit read: 204 with the same desired state when the
    /// unit exists, 409 when it does not.
    #[test]
    fn set_desired_only_agrees_with_decide_put() {
        let opts = r#"[{"section":"Service","name":"ExecStart","value":"/bin/sleep 100"}]"#;
        let bodies = [
            "{}".to_string(),
            r#"{"desiredState":"launched"}"#.into(),
            r#"{"desiredState":"loaded"}"#.into(),
            r#"{"desiredState":"inactive"}"#.into(),
            r#"{"desiredState":"bogus"}"#.into(),
            r#"{"desiredState":"launched","options":[]}"#.into(),
            format!(r#"{{"desiredState":"launched","options":{opts}}}"#),
            format!(r#"{{"options":{opts}}}"#),
        ];
        let mut fast = 0;
        for name in ["a.service", "t@.service", "t@1.service"] {
            let stored = stored(name, "/bin/sleep 100");
            for body in &bodies {
                let b = parse_put(name, JSON, body.as_bytes()).expect("parses");
                let Some(d) = set_desired_only(name, &b) else {
                    continue;
                };
                fast += 1;
                assert_eq!(
                    decide_put(name, &b, Some(&stored)),
                    Ok(PutAction::SetDesired(d)),
                    "{name} {body}"
                );
                assert_eq!(
                    decide_put(name, &b, None).map_err(|e| e.code),
                    Err(409),
                    "{name} {body}"
                );
            }
        }
        // launched, loaded, inactive and launched with empty options on
        // the unit and the instance; only inactive on the template.
        assert_eq!(fast, 2 * 4 + 1);
    }

    #[test]
    fn put_check_order() {
        let a = stored("a.service", "/bin/sleep 100");
        let opts = r#"[{"section":"Service","name":"ExecStart","value":"/bin/sleep 100"}]"#;
        let other = r#"[{"section":"Service","name":"ExecStart","value":"/bin/sleep 200"}]"#;
        let bad_opts = r#"[{"section":"X-Fleet","name":"MachineID","value":"x"},{"section":"X-Fleet","name":"Global","value":"true"}]"#;
        type Case<'a> = (
            &'a str,
            Option<&'a str>,
            String,
            Option<&'a StoredUnit>,
            u16,
        );
        let cases: Vec<Case> = vec![
            // 415 wins over everything.
            ("bad", Some("text/plain"), "garbage".into(), None, 415),
            ("bad", None, "{}".into(), None, 415),
            (
                "a.service",
                Some("application/json; charset=utf-8"),
                format!(r#"{{"options":{opts}}}"#),
                None,
                201,
            ),
            // 400 body before name checks.
            ("bad", JSON, "{".into(), None, 400),
            // Name mismatch, then bad name.
            (
                "a.service",
                JSON,
                r#"{"name":"b.service"}"#.into(),
                None,
                400,
            ),
            ("bad", JSON, "{}".into(), None, 400),
            // New unit without options: 409, even with a bad desired state.
            (
                "a.service",
                JSON,
                r#"{"desiredState":"bogus"}"#.into(),
                None,
                409,
            ),
            (
                "a.service",
                JSON,
                format!(r#"{{"options":{bad_opts}}}"#),
                None,
                400,
            ),
            (
                "a.service",
                JSON,
                format!(r#"{{"options":{opts},"desiredState":"launched"}}"#),
                None,
                201,
            ),
            (
                "a.service",
                JSON,
                format!(r#"{{"options":{opts},"desiredState":"bogus"}}"#),
                None,
                400,
            ),
            (
                "t@.service",
                JSON,
                format!(r#"{{"options":{opts},"desiredState":"launched"}}"#),
                None,
                400,
            ),
            (
                "t@.service",
                JSON,
                format!(r#"{{"options":{opts}}}"#),
                None,
                201,
            ),
            // Existing unit.
            (
                "a.service",
                JSON,
                format!(r#"{{"options":{other}}}"#),
                Some(&a),
                201,
            ),
            (
                "a.service",
                JSON,
                format!(r#"{{"options":{opts}}}"#),
                Some(&a),
                409,
            ),
            ("a.service", JSON, "{}".into(), Some(&a), 409),
            (
                "a.service",
                JSON,
                r#"{"desiredState":"bogus"}"#.into(),
                Some(&a),
                400,
            ),
            (
                "a.service",
                JSON,
                r#"{"desiredState":"launched"}"#.into(),
                Some(&a),
                204,
            ),
            (
                "a.service",
                JSON,
                format!(r#"{{"name":"a.service","options":{opts},"desiredState":"loaded"}}"#),
                Some(&a),
                204,
            ),
            (
                "a.service",
                JSON,
                format!(r#"{{"options":{bad_opts}}}"#),
                Some(&a),
                400,
            ),
        ];
        for (i, (name, ct, body, ex, want)) in cases.into_iter().enumerate() {
            assert_eq!(
                code(put(name, ct, &body, ex)),
                want,
                "case {i}: {name} {body}"
            );
        }
        let t = stored("t@.service", "/bin/true");
        assert_eq!(
            code(put(
                "t@.service",
                JSON,
                r#"{"desiredState":"loaded"}"#,
                Some(&t)
            )),
            400
        );
        assert_eq!(
            code(put(
                "t@.service",
                JSON,
                r#"{"desiredState":"inactive"}"#,
                Some(&t)
            )),
            204
        );
    }

    /// fleet's `CreateUnit` stores a replacement as it stores a new unit:
    /// the body's desired state, `inactive` without one, so a unit replaced
    /// by fleetctl's `--replace` (options, no desired state) passes through
    /// `inactive`, which fleetctl waits for before it loads or starts it.
    #[test]
    fn a_replacement_takes_the_bodys_desired_state_or_inactive() {
        let a = stored("a.service", "/bin/sleep 100");
        let other = r#"[{"section":"Service","name":"ExecStart","value":"/bin/sleep 200"}]"#;
        let decide = |body: String| {
            let b = parse_put("a.service", JSON, body.as_bytes()).unwrap();
            decide_put("a.service", &b, Some(&a)).unwrap()
        };
        for (body, want) in [
            (format!(r#"{{"options":{other}}}"#), ClusterState::Inactive),
            (
                format!(r#"{{"options":{other},"desiredState":"launched"}}"#),
                ClusterState::Launched,
            ),
        ] {
            match decide(body) {
                PutAction::Replace { desired, unit } => {
                    assert_eq!(desired, want);
                    assert_eq!(unit.options[0].value, "/bin/sleep 200");
                }
                other => panic!("not a replacement: {other:?}"),
            }
        }
    }

    #[test]
    fn tokens() {
        let t = page_token("units", "web@1.service");
        assert_eq!(parse_page_token("units", &t), Ok("web@1.service".into()));
        assert!(parse_page_token("states", &t).is_err());
        let long = format!("{}/{}", "u".repeat(256), "m".repeat(128));
        let t = page_token("states", &long);
        assert_eq!(parse_page_token("states", &t), Ok(long));
        let empty = page_token("units", "");
        for bad in ["", "zz", "abc", "00", &"ab".repeat(600), &empty] {
            assert_eq!(
                parse_page_token("units", bad).map_err(|e| e.code),
                Err(400),
                "{bad}"
            );
        }
    }

    #[test]
    fn patch_ops() {
        let ok = r#"[{"op":"add","path":"/m1/metadata/role","value":{"value":"web"}},{"op":"remove","path":"/m1/metadata/x"}]"#;
        let got = parse_patch(ok.as_bytes()).unwrap();
        assert_eq!(got[0].value.as_deref(), Some("web"));
        assert_eq!(got[1].value, None);
        for bad in [
            r#"{}"#,
            r#"[{"op":"move","path":"/m1/metadata/role","value":{"value":"web"}}]"#,
            r#"[{"op":"add","path":"/m1/role","value":{"value":"web"}}]"#,
            r#"[{"op":"add","path":"/m1/metadata/role"}]"#,
            r#"[{"op":"add","path":"/m1/metadata/role","value":"web"}]"#,
            r#"[{"op":"add","path":"/m1/metadata/role","value":{"value":""}}]"#,
            r#"[{"op":"add","path":"/m1/metadata/role","value":{"value":7}}]"#,
            r#"[{"op":1,"path":"/m1/metadata/role","value":{"value":"web"}}]"#,
            r#"["add"]"#,
        ] {
            assert_eq!(
                parse_patch(bad.as_bytes()).map_err(|e| e.code),
                Err(400),
                "{bad}"
            );
        }
    }

    /// fleet's own client and tests marshal a Go struct whose value field
    /// has no JSON tag: `"Value"`, capital V, which Go's decoder matches
    /// to `value` without regard to case; so does the rest of the body.
    #[test]
    fn patch_keys_decode_as_go_decodes_them() {
        let fleets = r#"[{"op":"add","path":"/m1/metadata/foo","Value":{"value":"bar"}},{"op":"remove","path":"/m1/metadata/ping","Value":{"value":""}}]"#;
        let got = parse_patch(fleets.as_bytes()).unwrap();
        assert_eq!(got[0].value.as_deref(), Some("bar"));
        assert_eq!(
            (got[1].key.as_str(), got[1].value.as_deref()),
            ("ping", None)
        );
        let shouted =
            r#"[{"OP":"replace","Path":"/m1/metadata/foo","VALUE":{"Value":"baz"},"extra":1}]"#;
        let got = parse_patch(shouted.as_bytes()).unwrap();
        assert_eq!(
            (got[0].key.as_str(), got[0].value.as_deref()),
            ("foo", Some("baz"))
        );
        // A remove needs no value at all; fleet's bad value is an empty one.
        let bad_value = r#"[{"op":"add","path":"/m1/metadata/foo","Value":{"value":""}}]"#;
        let e = parse_patch(bad_value.as_bytes()).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (400, "invalid value: add and replace require a value")
        );
    }
}
