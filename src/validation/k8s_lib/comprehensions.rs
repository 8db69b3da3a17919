//! The macros of Kubernetes' CEL environment that the `cel` crate's parser does not expand:
//! cel-go's two-variable comprehensions (`ext.TwoVarComprehensions`, Kubernetes 1.32:
//! `all(i, v, p)`, `exists(i, v, p)`, `existsOne`/`exists_one(i, v, p)`, `transformList`,
//! `transformMap`, `transformMapEntry`, each with an optional filter where cel-go has one) and
//! the lists extension's `sortBy(e, key)` (Kubernetes 1.34).
//!
//! [`expand`] rewrites their calls in a parsed rule into the comprehensions cel-go's macros
//! make, with a second iteration variable: on a list the index and the element, on a map the
//! key and the value. That is the form crfix's cost bound walks, as cel-go costs it. The
//! `cel` crate's interpreter binds only one iteration variable, so [`lower`] turns each
//! two-variable comprehension into one over `@entries(range)` (the `[index or key, value]`
//! pairs), binding the two variables around the expressions the rule wrote with
//! `cel.bind`-like comprehensions; `transformMap` and `transformMapEntry` collect pairs or
//! maps and build the map once (`@pairsToMap`, `@mergeMaps`), so that a large map costs no
//! copy per step. The hidden functions (names CEL source cannot spell) are [`register`]ed
//! only for the rules that use them.

use cel::common::ast::{
    CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr,
};
use cel::common::types::{CelInt, CelList, CelMap, CelMapKey, DYN_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::k8s_error;

/// The hidden functions of the lowered form.
pub(crate) const ENTRIES: &str = "@entries";
const PAIRS_TO_MAP: &str = "@pairsToMap";
const MERGE_MAPS: &str = "@mergeMaps";
/// cel-go's map insertion of `transformMap`/`transformMapEntry` (cost walk only).
pub(crate) const MAP_INSERT: &str = "cel.@mapInsert";
/// The lists extension's sort by a key list, registered by the `cel` crate's lists extension.
pub(crate) const SORT_BY_KEYS: &str = "@sortByAssociatedKeys";

const ACCU: &str = "@result";
const PAIR: &str = "@pair";
const SORT_BY_INPUT: &str = "@__sortBy_input__";
const UNUSED: &str = "#unused";

/// Ids of the nodes made here: above any the parser gives.
const FIRST_ID: u64 = 1 << 40;

struct Ids(u64);

impl Ids {
    fn node(&mut self, expr: Expr) -> IdedExpr {
        self.0 += 1;
        IdedExpr { id: self.0, expr }
    }
    fn ident(&mut self, name: &str) -> IdedExpr {
        self.node(Expr::Ident(name.to_string()))
    }
    fn call(&mut self, function: &str, args: Vec<IdedExpr>) -> IdedExpr {
        self.node(Expr::Call(CallExpr {
            func_name: function.to_string(),
            target: None,
            args,
        }))
    }
    fn bool(&mut self, b: bool) -> IdedExpr {
        self.node(Expr::Literal(LiteralValue::Boolean(b.into())))
    }
    fn int(&mut self, i: i64) -> IdedExpr {
        self.node(Expr::Literal(LiteralValue::Int(i.into())))
    }
    fn list(&mut self, elements: Vec<IdedExpr>) -> IdedExpr {
        self.node(Expr::List(ListExpr::new(elements)))
    }
    fn accu(&mut self) -> IdedExpr {
        self.ident(ACCU)
    }
    /// `name` bound to `value` while `body` is evaluated (cel-go's `cel.bind`).
    fn bind(&mut self, name: &str, value: IdedExpr, body: IdedExpr) -> IdedExpr {
        let range = self.list(Vec::new());
        let cond = self.bool(false);
        let step = self.ident(name);
        self.node(Expr::Comprehension(Box::new(ComprehensionExpr {
            iter_range: range,
            iter_var: UNUSED.to_string(),
            iter_var2: None,
            accu_var: name.to_string(),
            accu_init: value,
            loop_cond: cond,
            loop_step: step,
            result: body,
        })))
    }
}

/// What a two-variable macro accumulates.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    All,
    Exists,
    ExistsOne,
    TransformList,
    TransformMap,
    TransformMapEntry,
}

fn kind(function: &str, args: usize) -> Option<Kind> {
    Some(match (function, args) {
        ("all", 3) => Kind::All,
        ("exists", 3) => Kind::Exists,
        ("existsOne" | "exists_one", 3) => Kind::ExistsOne,
        ("transformList", 3 | 4) => Kind::TransformList,
        ("transformMap", 3 | 4) => Kind::TransformMap,
        ("transformMapEntry", 3 | 4) => Kind::TransformMapEntry,
        _ => return None,
    })
}

/// Expands the two-variable comprehensions and `sortBy` calls of `expr`, in place, into
/// cel-go's comprehensions; `Ok(true)` when there was one. `Err` is cel-go's compile error.
pub(crate) fn expand(expr: &mut IdedExpr) -> Result<bool, String> {
    let mut ids = Ids(FIRST_ID);
    expand_in(expr, &mut ids)
}

fn expand_in(expr: &mut IdedExpr, ids: &mut Ids) -> Result<bool, String> {
    let mut changed = false;
    for child in children(expr) {
        changed |= expand_in(child, ids)?;
    }
    let Expr::Call(call) = &mut expr.expr else {
        return Ok(changed);
    };
    let Some(target) = call.target.as_deref() else {
        return Ok(changed);
    };
    if call.func_name == "sortBy" && call.args.len() == 2 {
        if matches!(
            target.expr,
            Expr::Literal(_) | Expr::Map(_) | Expr::Struct(_)
        ) {
            return Err(
                "sortBy can only be applied to a list, identifier, comprehension, call \
                        or select expression"
                    .to_string(),
            );
        }
        let target = call.target.take().map(|t| *t).unwrap_or_default();
        let key = call.args.pop().unwrap_or_default();
        let var = simple_name(&call.args[0])?;
        *expr = sort_by(ids, target, var, key);
        return Ok(true);
    }
    let Some(kind) = kind(&call.func_name, call.args.len()) else {
        return Ok(changed);
    };
    let v1 = simple_name(&call.args[0])?;
    let v2 = simple_name(&call.args[1])?;
    let range = call.target.take().map(|t| *t).unwrap_or_default();
    let mut rest: Vec<IdedExpr> = call.args.drain(2..).collect();
    let body = rest.pop().unwrap_or_default();
    let filter = rest.pop();
    *expr = two_var(ids, kind, range, v1, v2, filter, body);
    Ok(true)
}

fn simple_name(arg: &IdedExpr) -> Result<String, String> {
    match &arg.expr {
        Expr::Ident(name) => Ok(name.clone()),
        _ => Err("argument must be a simple name".to_string()),
    }
}

/// The sub-expressions of `expr`.
fn children(expr: &mut IdedExpr) -> Vec<&mut IdedExpr> {
    match &mut expr.expr {
        Expr::Call(call) => call
            .target
            .as_deref_mut()
            .into_iter()
            .chain(call.args.iter_mut())
            .collect(),
        Expr::Comprehension(c) => vec![
            &mut c.iter_range,
            &mut c.accu_init,
            &mut c.loop_cond,
            &mut c.loop_step,
            &mut c.result,
        ],
        Expr::List(list) => list.elements.iter_mut().collect(),
        Expr::Map(MapExpr { entries }) => entries
            .iter_mut()
            .flat_map(|e| match &mut e.expr {
                cel::common::ast::EntryExpr::MapEntry(m) => vec![&mut m.key, &mut m.value],
                cel::common::ast::EntryExpr::StructField(f) => vec![&mut f.value],
            })
            .collect(),
        Expr::Struct(s) => s
            .entries
            .iter_mut()
            .flat_map(|e| match &mut e.expr {
                cel::common::ast::EntryExpr::MapEntry(m) => vec![&mut m.key, &mut m.value],
                cel::common::ast::EntryExpr::StructField(f) => vec![&mut f.value],
            })
            .collect(),
        Expr::Select(select) => vec![&mut select.operand],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

/// cel-go's comprehension for a two-variable macro.
fn two_var(
    ids: &mut Ids,
    kind: Kind,
    range: IdedExpr,
    v1: String,
    v2: String,
    filter: Option<IdedExpr>,
    body: IdedExpr,
) -> IdedExpr {
    let (init, cond, step, result) = match kind {
        Kind::All => {
            let accu = ids.accu();
            let cond = ids.call("@not_strictly_false", vec![accu]);
            let accu = ids.accu();
            let step = ids.call("_&&_", vec![accu, body]);
            (ids.bool(true), cond, step, ids.accu())
        }
        Kind::Exists => {
            let accu = ids.accu();
            let not = ids.call("!_", vec![accu]);
            let cond = ids.call("@not_strictly_false", vec![not]);
            let accu = ids.accu();
            let step = ids.call("_||_", vec![accu, body]);
            (ids.bool(false), cond, step, ids.accu())
        }
        Kind::ExistsOne => {
            let (accu, one) = (ids.accu(), ids.int(1));
            let plus = ids.call("_+_", vec![accu, one]);
            let accu = ids.accu();
            let step = ids.call("_?_:_", vec![body, plus, accu]);
            let (accu, one) = (ids.accu(), ids.int(1));
            let result = ids.call("_==_", vec![accu, one]);
            (ids.int(0), ids.bool(true), step, result)
        }
        Kind::TransformList | Kind::TransformMap | Kind::TransformMapEntry => {
            let accu = ids.accu();
            let step = match kind {
                Kind::TransformList => {
                    let item = ids.list(vec![body]);
                    ids.call("_+_", vec![accu, item])
                }
                Kind::TransformMap => {
                    let key = ids.ident(&v1);
                    ids.call(MAP_INSERT, vec![accu, key, body])
                }
                _ => ids.call(MAP_INSERT, vec![accu, body]),
            };
            let step = match filter {
                Some(filter) => {
                    let accu = ids.accu();
                    ids.call("_?_:_", vec![filter, step, accu])
                }
                None => step,
            };
            let init = if kind == Kind::TransformList {
                ids.list(Vec::new())
            } else {
                ids.node(Expr::Map(MapExpr::default()))
            };
            (init, ids.bool(true), step, ids.accu())
        }
    };
    ids.node(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: range,
        iter_var: v1,
        iter_var2: Some(v2),
        accu_var: ACCU.to_string(),
        accu_init: init,
        loop_cond: cond,
        loop_step: step,
        result,
    })))
}

/// cel-go's `sortBy`: `target` bound once, sorted by the list of its keys.
fn sort_by(ids: &mut Ids, target: IdedExpr, var: String, key: IdedExpr) -> IdedExpr {
    let input = ids.ident(SORT_BY_INPUT);
    let item = ids.list(vec![key]);
    let accu = ids.accu();
    let step = ids.call("_+_", vec![accu, item]);
    let init = ids.list(Vec::new());
    let cond = ids.bool(true);
    let result = ids.accu();
    let keys = ids.node(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: input,
        iter_var: var,
        iter_var2: None,
        accu_var: ACCU.to_string(),
        accu_init: init,
        loop_cond: cond,
        loop_step: step,
        result,
    })));
    let input = ids.ident(SORT_BY_INPUT);
    let sorted = ids.node(Expr::Call(CallExpr {
        func_name: SORT_BY_KEYS.to_string(),
        target: Some(Box::new(input)),
        args: vec![keys],
    }));
    ids.bind(SORT_BY_INPUT, target, sorted)
}

/// `expr` with its two-variable comprehensions in the form the `cel` crate evaluates.
pub(crate) fn lower(expr: &IdedExpr) -> IdedExpr {
    let mut ids = Ids(FIRST_ID << 1);
    lower_in(expr.clone(), &mut ids)
}

fn lower_in(mut expr: IdedExpr, ids: &mut Ids) -> IdedExpr {
    for child in children(&mut expr) {
        *child = lower_in(std::mem::take(child), ids);
    }
    let Expr::Comprehension(c) = &mut expr.expr else {
        return expr;
    };
    let Some(v2) = c.iter_var2.take() else {
        return expr;
    };
    let c = std::mem::take(c.as_mut());
    let (v1, range) = (c.iter_var.clone(), c.iter_range);
    let bound = |ids: &mut Ids, e: IdedExpr| bind_pair(ids, &v1, &v2, e);
    // The maps are built once at the end: the comprehension collects `[key, value]` pairs
    // (`transformMap`) or one-entry maps (`transformMapEntry`) in a list.
    let mut collect = None;
    let step = match c.loop_step.expr {
        Expr::Call(mut call) => match (call.func_name.as_str(), call.args.len()) {
            ("_&&_" | "_||_", 2) => {
                let p = call.args.pop().unwrap_or_default();
                call.args.push(bound(ids, p));
                ids.node(Expr::Call(call))
            }
            ("_?_:_", 3) => {
                let otherwise = call.args.pop().unwrap_or_default();
                let then = call.args.pop().unwrap_or_default();
                let cond = call.args.pop().unwrap_or_default();
                let then = lower_step(ids, then, &v1, &v2, &mut collect);
                let cond = bound(ids, cond);
                ids.call("_?_:_", vec![cond, then, otherwise])
            }
            _ => lower_step(ids, ids_node(Expr::Call(call)), &v1, &v2, &mut collect),
        },
        other => bound(ids, ids_node(other)),
    };
    let init = if collect.is_some() {
        ids.list(Vec::new())
    } else {
        c.accu_init
    };
    let pairs = ids.call(ENTRIES, vec![range]);
    let lowered = ids.node(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: pairs,
        iter_var: PAIR.to_string(),
        iter_var2: None,
        accu_var: c.accu_var,
        accu_init: init,
        loop_cond: c.loop_cond,
        loop_step: step,
        result: c.result,
    })));
    match collect {
        Some(build) => ids.call(build, vec![lowered]),
        None => lowered,
    }
}

/// A node without an id of its own (re-wrapped right away).
fn ids_node(expr: Expr) -> IdedExpr {
    IdedExpr { id: 0, expr }
}

/// The step `@result + [t]`, `cel.@mapInsert(@result, k, t)` or `cel.@mapInsert(@result, t)`
/// with the rule's expression bound to the pair; anything else is bound whole.
fn lower_step(
    ids: &mut Ids,
    step: IdedExpr,
    v1: &str,
    v2: &str,
    collect: &mut Option<&'static str>,
) -> IdedExpr {
    let Expr::Call(mut call) = step.expr else {
        return bind_pair(ids, v1, v2, step);
    };
    match (call.func_name.as_str(), call.args.len()) {
        ("_+_", 2) if matches!(call.args[1].expr, Expr::List(_)) => {
            if let Expr::List(list) = &mut call.args[1].expr {
                let items = std::mem::take(&mut list.elements);
                list.elements = items
                    .into_iter()
                    .map(|t| bind_pair(ids, v1, v2, t))
                    .collect();
            }
            ids.node(Expr::Call(call))
        }
        (MAP_INSERT, 3) => {
            *collect = Some(PAIRS_TO_MAP);
            let t = call.args.pop().unwrap_or_default();
            let t = bind_pair(ids, v1, v2, t);
            let (pair, zero) = (ids.ident(PAIR), ids.int(0));
            let key = ids.call("_[_]", vec![pair, zero]);
            let item = ids.list(vec![key, t]);
            let item = ids.list(vec![item]);
            let accu = ids.accu();
            ids.call("_+_", vec![accu, item])
        }
        (MAP_INSERT, 2) => {
            *collect = Some(MERGE_MAPS);
            let t = call.args.pop().unwrap_or_default();
            let t = bind_pair(ids, v1, v2, t);
            let item = ids.list(vec![t]);
            let accu = ids.accu();
            ids.call("_+_", vec![accu, item])
        }
        _ => {
            let step = ids.node(Expr::Call(call));
            bind_pair(ids, v1, v2, step)
        }
    }
}

/// `e` with `v1` and `v2` bound to the current pair's key (or index) and value.
fn bind_pair(ids: &mut Ids, v1: &str, v2: &str, e: IdedExpr) -> IdedExpr {
    let (pair, one) = (ids.ident(PAIR), ids.int(1));
    let value = ids.call("_[_]", vec![pair, one]);
    let inner = ids.bind(v2, value, e);
    let (pair, zero) = (ids.ident(PAIR), ids.int(0));
    let key = ids.call("_[_]", vec![pair, zero]);
    ids.bind(v1, key, inner)
}

/// Registers the hidden functions of the lowered form.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_overload(ENTRIES, "@entries(dyn)", vec![DYN_TYPE], entries)?;
    env.add_overload(
        PAIRS_TO_MAP,
        "@pairsToMap(list)",
        vec![LIST_TYPE],
        pairs_to_map,
    )?;
    env.add_overload(MERGE_MAPS, "@mergeMaps(list)", vec![LIST_TYPE], merge_maps)?;
    Ok(())
}

fn one<'a, 'b, 'v>(args: &'a [CowVal<'b, 'v>]) -> Result<&'a (dyn Val + 'v), ExecutionError> {
    match args {
        [a] => Ok(a.as_ref()),
        _ => Err(ExecutionError::invalid_argument_count(1, args.len())),
    }
}

fn no_overload(function: &str, val: &dyn Val) -> ExecutionError {
    ExecutionError::no_such_overload(function, vec![val.get_type().name().to_owned()])
}

/// The `[index, element]` pairs of a list, the `[key, value]` pairs of a map.
fn entries<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let range = one(&args)?;
    let iterable = range
        .as_iterable()
        .ok_or_else(|| no_overload("all", range))?;
    let is_map = range.get_type().name() == "map";
    let indexer = range.as_indexer();
    let mut pairs: Vec<Box<dyn Val + 'v>> = Vec::new();
    let mut it = iterable.iter();
    let mut index = 0i64;
    while let Some(item) = it.next() {
        let (first, second): (Box<dyn Val + 'v>, Box<dyn Val + 'v>) = if is_map {
            let value = indexer
                .ok_or_else(|| no_overload("all", range))?
                .get(item)?
                .into_owned();
            (item.clone_as_boxed(), value)
        } else {
            (Box::new(CelInt::from(index)), item.clone_as_boxed())
        };
        pairs.push(Box::new(CelList::from(vec![first, second])));
        index += 1;
    }
    Ok(CowVal::owned(CelList::from(pairs)))
}

/// The elements of a list argument, owned.
fn elements<'v>(list: &(dyn Val + 'v)) -> Result<Vec<Box<dyn Val + 'v>>, ExecutionError> {
    let iterable = list
        .as_iterable()
        .ok_or_else(|| no_overload("transformMap", list))?;
    let mut out = Vec::new();
    let mut it = iterable.iter();
    while let Some(item) = it.next() {
        out.push(item.clone_as_boxed());
    }
    Ok(out)
}

/// cel-go's `%v` of a map key, for its duplicate-key error.
fn key_text(key: &dyn Val) -> String {
    match cel::Value::try_from(key) {
        Ok(cel::Value::String(s)) => s.to_string(),
        Ok(cel::Value::Int(i)) => i.to_string(),
        Ok(cel::Value::UInt(u)) => u.to_string(),
        Ok(cel::Value::Bool(b)) => b.to_string(),
        _ => format!("{key:?}"),
    }
}

fn insert<'v>(
    map: &mut std::collections::HashMap<CelMapKey<'v>, Box<dyn Val + 'v>>,
    key: Box<dyn Val + 'v>,
    value: Box<dyn Val + 'v>,
) -> Result<(), ExecutionError> {
    let text = key_text(key.as_ref());
    let key = CelMapKey::try_from(key)
        .map_err(|_| ExecutionError::function_error("transformMap", "unsupported key type"))?;
    if map.contains_key(&key) {
        return Err(k8s_error(
            "transformMapEntry",
            format!("insert failed: key {text} already exists"),
        ));
    }
    map.insert(key, value);
    Ok(())
}

/// `transformMap`'s map, from its `[key, value]` pairs.
fn pairs_to_map<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let mut map = std::collections::HashMap::new();
    for pair in elements(one(&args)?)? {
        let mut kv = elements(pair.as_ref())?.into_iter();
        let (Some(k), Some(v)) = (kv.next(), kv.next()) else {
            return Err(ExecutionError::function_error("transformMap", "bad pair"));
        };
        insert(&mut map, k, v)?;
    }
    Ok(CowVal::owned(CelMap::from(map)))
}

/// `transformMapEntry`'s map: the maps merged in order, a repeated key an error as in cel-go.
fn merge_maps<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let mut map = std::collections::HashMap::new();
    for entry in elements(one(&args)?)? {
        if entry.get_type().name() != "map" {
            return Err(no_overload("transformMapEntry", entry.as_ref()));
        }
        let indexer = entry
            .as_indexer()
            .ok_or_else(|| no_overload("transformMapEntry", entry.as_ref()))?;
        for key in elements(entry.as_ref())? {
            let value = indexer.get(key.as_ref())?.into_owned();
            insert(&mut map, key, value)?;
        }
    }
    Ok(CowVal::owned(CelMap::from(map)))
}
