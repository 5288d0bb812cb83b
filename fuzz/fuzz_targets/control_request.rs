//! The control protocol's decoder on any bytes: never panics, and a request
//! it accepts encodes back to a line that decodes to the same request.
#![no_main]

use flotilla_units::protocol::decode_request;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|line: &[u8]| {
    if let Ok(envelope) = decode_request(line) {
        let again = serde_json::to_vec(&envelope).expect("a decoded request encodes");
        assert_eq!(decode_request(&again).as_ref(), Ok(&envelope));
    }
});
