//! API request validation as pure functions: the exact order of checks of
//! `PUT /fleet/v1/units/<name>` (docs/fleet-compat.md), page tokens, and
//! `PATCH /fleet/v1/machines` operations.

use crate::model::{ClusterState, StoredUnit};
use crate::requirements::{replaces_cycle, validate_options, Requirements};
use flotilla_systemd::{canonical_text, unit_hash};
use flotilla_units::fleet::UnitOption;
use flotilla_units::fleet_api;
use flotilla_units::unit_name::{is_template, validate_unit_name};
use std::collections::BTreeMap;

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
        /// A new desired state, when given.
        desired: Option<ClusterState>,
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
                Some(s) => {
                    let d = parse_desired(s)?;
                    check_template(name, d)?;
                    Some(d)
                }
                None => None,
            };
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

/// Refuses a unit whose `Replaces=` would close a cycle with the `stored`
/// units (400, as fleet documents: "A circular replacement between multiple
/// units is not allowed"), counting a unit and its `MachineOf=` peers as
/// one. Only units with `Replaces=` or `MachineOf=` can close one, so the
/// API reads the stored units only for those.
pub fn check_replaces(
    unit: &StoredUnit,
    stored: &BTreeMap<String, StoredUnit>,
) -> Result<(), ApiError> {
    let req = Requirements::from_options(&unit.name, &unit.options);
    if req.replaces.is_empty() && req.machine_of.is_empty() {
        return Ok(());
    }
    let others: Vec<(&str, Requirements)> = stored
        .iter()
        .map(|(n, u)| (n.as_str(), Requirements::from_options(n, &u.options)))
        .collect();
    match replaces_cycle(&unit.name, &req, others.iter().map(|(n, r)| (*n, r))) {
        None => Ok(()),
        Some(cycle) => Err(ApiError::new(
            400,
            format!(
                "invalid unit options: circular Replaces ({}): a circular replacement between multiple units is not allowed",
                cycle.join(" -> ")
            ),
        )),
    }
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

/// Validates every operation before any is applied.
pub fn parse_patch(body: &[u8]) -> Result<Vec<MetadataChange>, ApiError> {
    let ops: Vec<fleet_api::MetadataOp> = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(400, format!("unable to decode body: {e}")))?;
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        if !matches!(op.op.as_str(), "add" | "remove" | "replace") {
            return Err(ApiError::new(
                400,
                "invalid op: expect add, remove, or replace",
            ));
        }
        let parsed = op
            .path
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
        let value = if op.op == "remove" {
            None
        } else {
            match op.value.as_ref().and_then(|v| v.get("value")) {
                Some(v) => Some(v.clone()),
                None => {
                    return Err(ApiError::new(
                        400,
                        "invalid value: add and replace require a value",
                    ))
                }
            }
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

    #[test]
    fn circular_replaces_is_a_400() {
        let unit = |name: &str, replaces: &str| {
            let mut u = stored(name, "/bin/true");
            u.options.push(UnitOption {
                section: "X-Fleet".into(),
                name: "Replaces".into(),
                value: replaces.into(),
            });
            u.hash = unit_hash(&u.options);
            u
        };
        let mut all = BTreeMap::new();
        all.insert("a.service".to_string(), unit("a.service", "b.service"));
        all.insert("c.service".to_string(), stored("c.service", "/bin/true"));
        let err = check_replaces(&unit("b.service", "a.service"), &all).unwrap_err();
        assert_eq!(err.code, 400);
        assert!(
            err.message.contains("b.service -> a.service -> b.service"),
            "{}",
            err.message
        );
        assert!(check_replaces(&unit("b.service", "c.service"), &all).is_ok());
        assert!(check_replaces(&stored("b.service", "/bin/true"), &all).is_ok());
        // Replacing a's own contents: its old Replaces do not count.
        all.insert("b.service".to_string(), unit("b.service", "a.service"));
        assert!(check_replaces(&unit("a.service", "c.service"), &all).is_ok());
        assert!(check_replaces(&unit("a.service", "b*"), &all).is_err());
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
        ] {
            assert_eq!(
                parse_patch(bad.as_bytes()).map_err(|e| e.code),
                Err(400),
                "{bad}"
            );
        }
    }
}
