//! Values read from etcd, any bytes (another clusterd's version, a hand
//! edit, a torn write): each record type clusterd decodes from a watch or a
//! read. Properties: nothing panics; a value that decodes encodes back to
//! JSON that decodes to the same record.
#![no_main]

use flotilla_cluster::model::{Assignment, LogAnswer, Machine, StoredState, StoredUnit};
use flotilla_cluster::stored::{decode_desired, decode_value};
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Debug;

fn round_trip<T: DeserializeOwned + Serialize + PartialEq + Debug>(value: &[u8]) {
    if let Some(v) = decode_value::<T>(b"/fuzz", value) {
        let json = serde_json::to_vec(&v).expect("a decoded record encodes");
        assert_eq!(decode_value::<T>(b"/fuzz", &json).as_ref(), Some(&v));
    }
}

fuzz_target!(|value: &[u8]| {
    round_trip::<StoredUnit>(value);
    round_trip::<StoredState>(value);
    round_trip::<Machine>(value);
    round_trip::<Assignment>(value);
    round_trip::<LogAnswer>(value);
    if let Some(d) = decode_desired(b"/fuzz", value) {
        assert_eq!(decode_desired(b"/fuzz", d.as_str().as_bytes()), Some(d));
    }
});
