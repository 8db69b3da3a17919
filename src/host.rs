//! The host side of the waPC contract, behind a trait so every stage can be unit-tested
//! natively with a fake host.

use serde::Serialize;

/// `kubernetes/get_resource` request, as policy-server expects it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GetResourceRequest {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub disable_cache: bool,
    /// Prune the answer to these dotted fields (honoured by recent policy-servers; older ones
    /// ignore it and return the whole object).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_masks: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Debug,
    Info,
    Warning,
}

pub trait Host {
    /// The object as JSON, or the host's error string.
    fn get_resource(&self, request: &GetResourceRequest) -> Result<Vec<u8>, String>;
    fn log(&self, level: LogLevel, message: &str);
}

/// The real host: waPC host calls into policy-server.
pub struct WapcHost;

impl Host for WapcHost {
    fn get_resource(&self, request: &GetResourceRequest) -> Result<Vec<u8>, String> {
        let payload = serde_json::to_vec(request).map_err(|e| e.to_string())?;
        wapc_guest::host_call("kubewarden", "kubernetes", "get_resource", &payload)
            .map_err(|e| e.to_string())
    }

    fn log(&self, level: LogLevel, message: &str) {
        let level = match level {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warning => "warning",
        };
        let event = serde_json::json!({"level": level, "message": message, "policy": "crfix"});
        if let Ok(payload) = serde_json::to_vec(&event) {
            // A log that cannot be delivered must never fail the evaluation.
            let _ = wapc_guest::host_call("kubewarden", "tracing", "log", &payload);
        }
    }
}

/// A host made of a closure, for tests.
pub struct FnHost<F>(pub F)
where
    F: Fn(&GetResourceRequest) -> Result<Vec<u8>, String>;

impl<F> Host for FnHost<F>
where
    F: Fn(&GetResourceRequest) -> Result<Vec<u8>, String>,
{
    fn get_resource(&self, request: &GetResourceRequest) -> Result<Vec<u8>, String> {
        (self.0)(request)
    }

    fn log(&self, _level: LogLevel, _message: &str) {}
}
