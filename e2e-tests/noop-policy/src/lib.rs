//! The baseline of `make bench`: a waPC policy that answers without reading its payload, so
//! that its evaluation time is the host's fixed cost (instantiation, waPC round trip).

use wapc_guest::prelude::*;

#[no_mangle]
pub extern "C" fn wapc_init() {
    register_function("validate", validate);
    register_function("validate_settings", validate_settings);
    register_function("protocol_version", protocol_version);
}

fn validate(_payload: &[u8]) -> CallResult {
    Ok(br#"{"accepted":true}"#.to_vec())
}

fn validate_settings(_payload: &[u8]) -> CallResult {
    Ok(br#"{"valid":true}"#.to_vec())
}

fn protocol_version(_payload: &[u8]) -> CallResult {
    Ok(br#""v1""#.to_vec())
}
