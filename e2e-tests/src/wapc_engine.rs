//! The waPC engine of the e2e host: a [`wapc::WebAssemblyEngineProvider`] on wasmtime, written
//! here so that wasmtime is built with only what the host uses (Cranelift, the runtime, WASI
//! preview 1); a general-purpose provider enables nearly every wasmtime feature, which made a
//! first build several minutes longer.
//!
//! It behaves as the provider policy-server uses for `kubewarden-wapc` policies:
//!
//! * the module is linked once ([`EnginePre::new`]: WASI preview 1 and the waPC imports) and
//!   every [`EnginePre::rehydrate`] gives a fresh store and instance, so nothing survives from
//!   one evaluation to the next;
//! * the instance gets a WASI context with the host's stdio and nothing else (no
//!   preopened directories, arguments or environment);
//! * `_start` then `wapc_init` run when the guest exports them, then `__guest_call` serves each
//!   call; both have an epoch deadline when one is given (evaluation timeouts).

use std::error::Error;
use std::sync::Arc;

use wapc::{ModuleState, WebAssemblyEngineProvider};
use wasmtime::{Caller, Engine, Extern, Instance, InstancePre, Linker, Module, Store, TypedFunc};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::WasiCtxBuilder;

type BoxError = Box<dyn Error + Send + Sync>;

/// Epoch ticks allowed for initialisation and for each guest call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    pub init: u64,
    pub call: u64,
}

struct HostState {
    wasi: WasiP1Ctx,
    wapc: Option<Arc<ModuleState>>,
}

/// A module linked with its imports, ready to be instantiated many times.
#[derive(Clone)]
pub struct EnginePre {
    engine: Engine,
    pre: InstancePre<HostState>,
}

impl EnginePre {
    pub fn new(engine: &Engine, module: &Module) -> wasmtime::Result<EnginePre> {
        let mut linker: Linker<HostState> = Linker::new(engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |s: &mut HostState| &mut s.wasi)?;
        link_wapc(&mut linker)?;
        let pre = linker.instantiate_pre(module)?;
        Ok(EnginePre {
            engine: engine.clone(),
            pre,
        })
    }

    /// A provider for one [`wapc::WapcHost`]: a fresh store and instance.
    pub fn rehydrate(&self, deadlines: Option<Deadlines>) -> Provider {
        Provider {
            engine: self.engine.clone(),
            pre: self.pre.clone(),
            deadlines,
            store: None,
            guest_call: None,
        }
    }
}

pub struct Provider {
    engine: Engine,
    pre: InstancePre<HostState>,
    deadlines: Option<Deadlines>,
    store: Option<Store<HostState>>,
    guest_call: Option<TypedFunc<(i32, i32), i32>>,
}

/// wasmtime's error, with its causes, as the error waPC expects.
fn boxed(e: wasmtime::Error) -> BoxError {
    format!("{e:?}").into()
}

/// The engine's epoch interruption is always on: without a deadline, one that is never reached.
const NO_DEADLINE: u64 = u64::MAX / 2;

impl WebAssemblyEngineProvider for Provider {
    fn init(&mut self, host: Arc<ModuleState>) -> Result<(), BoxError> {
        let wasi = WasiCtxBuilder::new().inherit_stdio().build_p1();
        let mut store = Store::new(
            &self.engine,
            HostState {
                wasi,
                wapc: Some(host),
            },
        );
        store.set_epoch_deadline(self.deadlines.map_or(NO_DEADLINE, |d| d.init));
        let instance: Instance = self.pre.instantiate(&mut store).map_err(boxed)?;
        for start in [
            wapc::wapc_functions::TINYGO_START,
            wapc::wapc_functions::WAPC_INIT,
        ] {
            if let Ok(f) = instance.get_typed_func::<(), ()>(&mut store, start) {
                f.call(&mut store, ()).map_err(boxed)?;
            }
        }
        let guest_call = instance
            .get_typed_func::<(i32, i32), i32>(&mut store, wapc::wapc_functions::GUEST_CALL)
            .map_err(boxed)?;
        self.guest_call = Some(guest_call);
        self.store = Some(store);
        Ok(())
    }

    fn call(&mut self, op_length: i32, msg_length: i32) -> Result<i32, BoxError> {
        let (Some(store), Some(guest_call)) = (self.store.as_mut(), self.guest_call.as_ref())
        else {
            return Err("the module is not initialised".into());
        };
        store.set_epoch_deadline(self.deadlines.map_or(NO_DEADLINE, |d| d.call));
        guest_call
            .call(&mut *store, (op_length, msg_length))
            .map_err(boxed)
    }

    fn replace(&mut self, _bytes: &[u8]) -> Result<(), BoxError> {
        Err("replacing the module is not supported by the e2e host".into())
    }
}

fn memory(caller: &mut Caller<'_, HostState>) -> wasmtime::Result<wasmtime::Memory> {
    match caller.get_export("memory") {
        Some(Extern::Memory(m)) => Ok(m),
        _ => wasmtime::bail!("the guest exports no memory"),
    }
}

fn read(caller: &mut Caller<'_, HostState>, ptr: i32, len: i32) -> wasmtime::Result<Vec<u8>> {
    let mem = memory(caller)?;
    let mut buf = vec![0u8; len.max(0) as usize];
    mem.read(&*caller, ptr as u32 as usize, &mut buf)?;
    Ok(buf)
}

fn write(caller: &mut Caller<'_, HostState>, ptr: i32, bytes: &[u8]) -> wasmtime::Result<()> {
    let mem = memory(caller)?;
    mem.write(&mut *caller, ptr as u32 as usize, bytes)?;
    Ok(())
}

fn state(caller: &Caller<'_, HostState>) -> wasmtime::Result<Arc<ModuleState>> {
    caller
        .data()
        .wapc
        .clone()
        .ok_or_else(|| wasmtime::format_err!("no waPC state"))
}

/// The `wapc` imports (the waPC protocol's host side).
fn link_wapc(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    use wapc::wapc_functions as f;
    const NS: &str = "wapc";
    linker.func_wrap(
        NS,
        f::GUEST_REQUEST_FN,
        |mut caller: Caller<'_, HostState>, op_ptr: i32, ptr: i32| -> wasmtime::Result<()> {
            if let Some(inv) = state(&caller)?.get_guest_request() {
                write(&mut caller, op_ptr, inv.operation.as_bytes())?;
                write(&mut caller, ptr, &inv.msg)?;
            }
            Ok(())
        },
    )?;
    linker.func_wrap(
        NS,
        f::HOST_RESPONSE_FN,
        |mut caller: Caller<'_, HostState>, ptr: i32| -> wasmtime::Result<()> {
            let st = state(&caller)?;
            if let Some(bytes) = st.with_host_response(|b| b.to_vec()) {
                write(&mut caller, ptr, &bytes)?;
            }
            Ok(())
        },
    )?;
    linker.func_wrap(
        NS,
        f::HOST_RESPONSE_LEN_FN,
        |caller: Caller<'_, HostState>| -> wasmtime::Result<i32> {
            Ok(state(&caller)?.host_response_len() as i32)
        },
    )?;
    linker.func_wrap(
        NS,
        f::HOST_ERROR_FN,
        |mut caller: Caller<'_, HostState>, ptr: i32| -> wasmtime::Result<()> {
            if let Some(e) = state(&caller)?.get_host_error() {
                write(&mut caller, ptr, e.as_bytes())?;
            }
            Ok(())
        },
    )?;
    linker.func_wrap(
        NS,
        f::HOST_ERROR_LEN_FN,
        |caller: Caller<'_, HostState>| -> wasmtime::Result<i32> {
            Ok(state(&caller)?.get_host_error().map_or(0, |e| e.len()) as i32)
        },
    )?;
    linker.func_wrap(
        NS,
        f::GUEST_RESPONSE_FN,
        |mut caller: Caller<'_, HostState>, ptr: i32, len: i32| -> wasmtime::Result<()> {
            let bytes = read(&mut caller, ptr, len)?;
            state(&caller)?.set_guest_response(bytes);
            Ok(())
        },
    )?;
    linker.func_wrap(
        NS,
        f::GUEST_ERROR_FN,
        |mut caller: Caller<'_, HostState>, ptr: i32, len: i32| -> wasmtime::Result<()> {
            let bytes = read(&mut caller, ptr, len)?;
            state(&caller)?.set_guest_error(String::from_utf8_lossy(&bytes).into_owned());
            Ok(())
        },
    )?;
    linker.func_wrap(
        NS,
        f::HOST_CONSOLE_LOG,
        |mut caller: Caller<'_, HostState>, ptr: i32, len: i32| -> wasmtime::Result<()> {
            let bytes = read(&mut caller, ptr, len)?;
            state(&caller)?.do_console_log(&String::from_utf8_lossy(&bytes));
            Ok(())
        },
    )?;
    linker.func_wrap(
        NS,
        f::HOST_CALL,
        |mut caller: Caller<'_, HostState>,
         bd_ptr: i32,
         bd_len: i32,
         ns_ptr: i32,
         ns_len: i32,
         op_ptr: i32,
         op_len: i32,
         ptr: i32,
         len: i32|
         -> wasmtime::Result<i32> {
            let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
            let binding = text(read(&mut caller, bd_ptr, bd_len)?);
            let namespace = text(read(&mut caller, ns_ptr, ns_len)?);
            let operation = text(read(&mut caller, op_ptr, op_len)?);
            let payload = read(&mut caller, ptr, len)?;
            let st = state(&caller)?;
            st.do_host_call(&binding, &namespace, &operation, &payload)
                .map_err(|e| wasmtime::format_err!("host call failed: {e}"))
        },
    )?;
    Ok(())
}
