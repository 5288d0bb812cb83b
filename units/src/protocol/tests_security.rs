//! The `analyze security` reply carries a unit's declared context intact.

use super::*;
use crate::context::{Key, ServiceContext};

#[test]
fn security_data_survives_json() {
    let mut context = ServiceContext::default();
    for (k, v) in [
        ("LimitNOFILE", "65535"),
        ("ProtectSystem", "strict"),
        ("PrivateTmp", "yes"),
        ("CapabilityBoundingSet", ""),
        ("SystemCallFilter", "@system-service"),
        ("RestrictAddressFamilies", "AF_INET AF_UNIX"),
        ("ReadWritePaths", "-/var/lib/redis"),
        ("NoExecPaths", "/"),
        ("UMask", "007"),
        ("RestrictNamespaces", "yes"),
        ("SystemCallArchitectures", "native"),
        ("OOMScoreAdjust", "-900"),
    ] {
        context
            .set(Key::from_name(k).unwrap(), v)
            .unwrap_or_else(|e| panic!("{k}: {e}"));
    }
    let reply = Reply::Security {
        units: vec![SecurityData {
            unit: "redis".into(),
            pid: Some(1),
            user: Some("redis".into()),
            context,
            not_applied: vec![NotApplied {
                setting: "LimitNOFILE".into(),
                reason: "clamped".into(),
            }],
        }],
    };
    let text = serde_json::to_string(&reply).unwrap();
    let back: Reply = serde_json::from_str(&text).unwrap();
    assert_eq!(back, reply);
}
