//! Stage 4: deterministic, schema-guided repairs, driven by the validation errors.
//!
//! Each [`FieldError`] and the schema node that governs its pointer suggest at most one
//! repair (never a hard-coded path): see the submodules. Repairs are applied in rounds — all
//! the non-overlapping ones of a round at once, each checked against the guardrails first —
//! and the object is re-validated after each round. A repair that was meant to make its value
//! valid and did not is undone. The loop stops when the object is valid, when nothing is left
//! to try, when an error set repeats, or after [`MAX_ROUNDS`]; the result is the candidate
//! with the fewest errors seen, so errors never grow.

pub mod coerce;
pub mod dns;
pub mod enums;
mod fill;
mod relocate;

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use serde_json::Value;

use crate::guardrails;
use crate::pointer;
use crate::schema;
use crate::settings::Settings;
use crate::types::{Change, ChangeSource, ErrorKind, FieldError, ValidationOutcome};
use crate::validation::{self, ValidateOptions};

/// Rounds of repair + re-validation.
pub const MAX_ROUNDS: usize = 8;
/// Errors looked at per round (a huge object does not make a round slow).
pub const MAX_ERRORS_PER_ROUND: usize = 256;
/// Refusals kept for the report.
const MAX_REFUSALS: usize = 20;

pub(crate) const PRIORITY_IMMUTABLE: u8 = 0;
pub(crate) const PRIORITY_RELOCATE: u8 = 1;
pub(crate) const PRIORITY_VALUE: u8 = 2;
pub(crate) const PRIORITY_FILL: u8 = 3;

pub struct RepairContext<'a> {
    pub schema: &'a Value,
    /// The old object on UPDATE.
    pub old_object: Option<&'a Value>,
    pub settings: &'a Settings,
    pub options: ValidateOptions,
}

#[derive(Debug, Clone)]
pub struct RepairOutcome {
    /// The object after every repair that was applied.
    pub object: Value,
    /// What was changed and why, in order.
    pub changes: Vec<Change>,
    /// Validation of `object`.
    pub validation: ValidationOutcome,
    /// Repairs considered but not applied, and why (ambiguous, guardrail, ...).
    pub refused: Vec<String>,
    /// What only the user can do, for the rejection message (e.g. quote a number).
    pub hints: Vec<String>,
    /// The errors of the furthest-repaired candidate, when it is not the result: what the
    /// user would meet next (CEL rules run only once the structural errors are gone).
    pub furthest_errors: Vec<FieldError>,
}

/// What a repair does to the value at its path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Edit {
    Set(Value),
    Remove,
    /// Move the value at `from` to the path (creating missing parent objects).
    Move {
        from: String,
    },
}

/// What re-validation must show for a repair to be kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verify {
    Nothing,
    /// No error at the path itself.
    NoErrorAt,
    /// No error at or below the path.
    NoErrorUnder,
    /// No type error at the path.
    NoTypeErrorAt,
}

#[derive(Debug, Clone)]
pub(crate) struct Proposal {
    pub path: String,
    pub edit: Edit,
    /// The repair kind (`enum`, `coerce`, `rename`, `move`, `dns1123`, ...).
    pub rule: &'static str,
    /// Why, for the warning.
    pub reason: String,
    pub verify: Verify,
    pub priority: u8,
}

impl Proposal {
    fn key(&self) -> String {
        match &self.edit {
            Edit::Move { from } => format!("{}|{from}|{}", self.rule, self.path),
            _ => format!("{}|{}", self.rule, self.path),
        }
    }

    fn touched(&self) -> impl Iterator<Item = &str> {
        let from = match &self.edit {
            Edit::Move { from } => Some(from.as_str()),
            _ => None,
        };
        std::iter::once(self.path.as_str()).chain(from)
    }

    fn conflicts(&self, other: &Proposal) -> bool {
        self.touched().any(|a| {
            other
                .touched()
                .any(|b| pointer::is_under(a, b) || pointer::is_under(b, a))
        })
    }

    /// The pointer a refusal is reported at (the user's value).
    fn origin(&self) -> &str {
        match &self.edit {
            Edit::Move { from } => from,
            _ => &self.path,
        }
    }
}

/// A repair that was applied in the current round.
struct Applied {
    change: Change,
    verify: Verify,
    /// For `Set`: the value before (None: absent), to undo it.
    undo: Option<Option<Value>>,
}

/// Repairs `object` until it is valid or no repair reduces the errors (bounded rounds).
pub fn repair(ctx: &RepairContext, object: &Value, initial: &ValidationOutcome) -> RepairOutcome {
    repair_with(ctx, object, initial, &|candidate: &Value| {
        validation::validate(ctx.schema, candidate, ctx.old_object, ctx.options)
    })
}

/// [`repair`] with the validator given (the pipeline's is [`validation::validate`]).
pub fn repair_with(
    ctx: &RepairContext,
    object: &Value,
    initial: &ValidationOutcome,
    validate: &dyn Fn(&Value) -> ValidationOutcome,
) -> RepairOutcome {
    let mut engine = Engine {
        ctx,
        index: None,
        tried: HashSet::new(),
        refused: Vec::new(),
        hints: Vec::new(),
    };
    let mut current = object.clone();
    let mut validation = initial.clone();
    let mut changes: Vec<Change> = Vec::new();
    // The best candidate so far when it is not `current`: (object, validation, changes).
    let mut best: Option<(Value, ValidationOutcome, usize)> = None;
    let mut best_errors = initial.errors.len();
    let mut seen = HashSet::from([fingerprint(&initial.errors)]);

    for _round in 0..MAX_ROUNDS {
        if validation.is_valid() {
            break;
        }
        let budget = ctx
            .settings
            .max_patch_operations
            .saturating_sub(changes.len());
        if budget == 0 {
            engine.refuse(format!(
                "stopped after {} repairs (maxPatchOperations)",
                changes.len()
            ));
            break;
        }
        let proposals = engine.round_proposals(&current, &validation.errors);
        if proposals.is_empty() {
            break;
        }
        if best.is_none() {
            best = Some((current.clone(), validation.clone(), changes.len()));
        }
        let applied = engine.apply_all(&mut current, proposals, budget, changes.len());
        if applied.is_empty() {
            continue;
        }
        let Some((applied, next)) = engine.keep_verified(&mut current, applied, validate) else {
            // Back where the round started; what was deferred is tried next round.
            continue;
        };
        changes.extend(applied.into_iter().map(|a| a.change));
        validation = next;
        if validation.errors.len() < best_errors {
            best_errors = validation.errors.len();
            best = None;
        }
        if !seen.insert(fingerprint(&validation.errors)) {
            break;
        }
    }

    let mut furthest_errors = Vec::new();
    if let Some((object, v, n)) = best {
        furthest_errors = std::mem::replace(&mut validation, v).errors;
        current = object;
        changes.truncate(n);
    }
    RepairOutcome {
        object: current,
        changes,
        validation,
        refused: engine.refused,
        hints: engine.hints,
        furthest_errors,
    }
}

fn fingerprint(errors: &[FieldError]) -> u64 {
    let mut h = DefaultHasher::new();
    for e in errors {
        e.pointer.hash(&mut h);
        e.rule_name().hash(&mut h);
    }
    h.finish()
}

fn verified(applied: &Applied, errors: &[FieldError]) -> bool {
    let path = &applied.change.path;
    match applied.verify {
        Verify::Nothing => true,
        Verify::NoErrorAt => !errors.iter().any(|e| &e.pointer == path),
        Verify::NoErrorUnder => !errors.iter().any(|e| pointer::is_under(&e.pointer, path)),
        Verify::NoTypeErrorAt => !errors
            .iter()
            .any(|e| &e.pointer == path && matches!(e.kind, ErrorKind::Type { .. })),
    }
}

fn undo(object: &mut Value, applied: &Applied) {
    match &applied.undo {
        Some(Some(old)) => {
            set_at(object, &applied.change.path, old.clone());
        }
        Some(None) => {
            remove_at(object, &applied.change.path);
        }
        None => {}
    }
}

struct Engine<'c, 'a> {
    ctx: &'c RepairContext<'a>,
    index: Option<relocate::SchemaIndex>,
    hints: Vec<String>,
    /// Proposals refused or undone: never tried again.
    tried: HashSet<String>,
    refused: Vec<String>,
}

impl Engine<'_, '_> {
    /// Applies a round's proposals, at most `budget` of them (`maxPatchOperations`).
    fn apply_all(
        &mut self,
        current: &mut Value,
        proposals: Vec<Proposal>,
        budget: usize,
        done: usize,
    ) -> Vec<Applied> {
        let mut applied = Vec::new();
        for proposal in proposals {
            if applied.len() >= budget {
                self.refuse(format!(
                    "stopped after {} repairs (maxPatchOperations)",
                    done + applied.len()
                ));
                break;
            }
            if let Some(a) = self.apply(current, proposal) {
                applied.push(a);
            }
        }
        applied
    }

    /// Re-validates after a round: a repair meant to make its value valid that did not is
    /// undone. `None` when every repair of the round was undone.
    fn keep_verified(
        &mut self,
        current: &mut Value,
        applied: Vec<Applied>,
        validate: &dyn Fn(&Value) -> ValidationOutcome,
    ) -> Option<(Vec<Applied>, ValidationOutcome)> {
        let next = validate(current);
        let (kept, failed): (Vec<Applied>, Vec<Applied>) =
            applied.into_iter().partition(|a| verified(a, &next.errors));
        if failed.is_empty() {
            return Some((kept, next));
        }
        for a in failed.iter().rev() {
            undo(current, a);
            self.refuse(format!(
                "not repaired {}: {} ({}) would still be invalid",
                a.change.path,
                a.change
                    .new
                    .as_ref()
                    .map(crate::text::short_value)
                    .unwrap_or_default(),
                a.change.reason
            ));
        }
        if kept.is_empty() {
            return None;
        }
        Some((kept, validate(current)))
    }

    fn refuse(&mut self, message: String) {
        if self.refused.len() < MAX_REFUSALS && !self.refused.contains(&message) {
            self.refused.push(message);
        }
    }

    /// The non-overlapping repairs for this round, most important first.
    fn round_proposals(&mut self, object: &Value, errors: &[FieldError]) -> Vec<Proposal> {
        let mut proposals: Vec<Proposal> = Vec::new();
        let mut keys = HashSet::new();
        for error in errors.iter().take(MAX_ERRORS_PER_ROUND) {
            if let Some(p) = self.propose(object, error) {
                if !self.tried.contains(&p.key()) && keys.insert(p.key()) {
                    proposals.push(p);
                }
            }
        }
        proposals.sort_by_key(|p| p.priority);

        // Two keys that would become the same property: neither guess is safe.
        let mut colliding: Vec<usize> = Vec::new();
        for (i, p) in proposals.iter().enumerate() {
            if !matches!(p.edit, Edit::Move { .. }) {
                continue;
            }
            let rivals: Vec<&Proposal> = proposals
                .iter()
                .filter(|q| matches!(q.edit, Edit::Move { .. }) && q.path == p.path)
                .collect();
            if rivals.len() > 1 {
                colliding.push(i);
                let target = pointer::split_last(&p.path)
                    .map(|(_, name)| name)
                    .unwrap_or_default();
                self.refuse(format!(
                    "not repaired {}: {} keys collide as {target}",
                    p.origin(),
                    rivals.len()
                ));
            }
        }
        for &i in colliding.iter().rev() {
            let p = proposals.remove(i);
            self.tried.insert(p.key());
        }

        let mut chosen: Vec<Proposal> = Vec::new();
        for p in proposals {
            if !chosen.iter().any(|c| c.conflicts(&p)) {
                chosen.push(p);
            }
        }
        chosen
    }

    /// The repair one error suggests, if any (refusals are recorded).
    fn propose(&mut self, object: &Value, error: &FieldError) -> Option<Proposal> {
        let at = error.pointer.as_str();
        let schema_root = self.ctx.schema;
        match &error.kind {
            ErrorKind::Unknown => {
                let settings = self.ctx.settings;
                let allowed = |p: &str| settings.allows(p);
                match relocate::propose(schema_root, object, at, &mut self.index, &allowed) {
                    Ok(p) => p,
                    Err(why) => {
                        self.refuse(format!("not repaired {at}: {why}"));
                        None
                    }
                }
            }
            ErrorKind::Type { expected } => self.coercion(object, error, expected),
            ErrorKind::Enum { allowed } => {
                let value = object.pointer(at)?;
                let field = enums::Field {
                    name: &pointer::split_last(at).map(|(_, f)| f).unwrap_or_default(),
                    description: schema::node_at(schema_root, at)
                        .and_then(|n| n.get("description"))
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                };
                match enums::repair(value, allowed, &field) {
                    Ok(Some(fix)) => Some(value_proposal(
                        at,
                        fix.value,
                        "enum",
                        fix.reason,
                        Verify::NoErrorAt,
                    )),
                    Ok(None) => None,
                    Err(why) => {
                        let shown = crate::text::short_value(value);
                        self.refuse(format!("not repaired {at} {shown}: {why}"));
                        None
                    }
                }
            }
            ErrorKind::Pattern { pattern } => self.dns(object, at, pattern),
            ErrorKind::Cel {
                rule, transition, ..
            } => {
                if *transition && fill::is_immutability_rule(rule) {
                    if self.ctx.settings.restore_immutable {
                        fill::immutable(object, self.ctx.old_object, at)
                    } else {
                        None
                    }
                } else if rule.contains("matches(") {
                    self.dns(object, at, rule)
                } else {
                    None
                }
            }
            ErrorKind::Required => fill::required(schema_root, object, at),
            ErrorKind::Null => fill::null(object, at),
            _ => None,
        }
    }

    /// A value of the wrong type, converted when nothing is lost; a number with a fraction
    /// never becomes a string (a hint for the rejection says to quote it).
    fn coercion(&mut self, object: &Value, error: &FieldError, expected: &str) -> Option<Proposal> {
        let at = error.pointer.as_str();
        let value = object.pointer(at)?;
        if let Some(hint) = coerce::lost_text(value, expected) {
            return self.refuse_with_hint(at, format!("{}: {hint}", error.field_path()));
        }
        let node = schema::node_at(self.ctx.schema, at);
        if expected == "array" {
            if let Some(why) = one_reading_of_several(value, node.and_then(|n| n.get("items"))) {
                self.refuse(format!("not repaired {at}: {why}"));
                return None;
            }
        }
        if expected == "array" && value.is_object() {
            return self.object_as_item(at, value, node?);
        }
        let new = coerce::coerce(value, expected)?;
        let unlike = node
            .and_then(|n| coerce::unlike_the_schemas_own(value, &new, n))
            .or_else(|| coerce::unlike_its_list(value, &new, &other_items(object, at)));
        if let Some(hint) = unlike {
            return self.refuse_with_hint(at, format!("{}: {hint}", error.field_path()));
        }
        if value.is_number() && expected == "string" && crate::certainty::names_something(at) {
            let hint = format!(
                "{}: the number {} is not turned into a name: a number where a name belongs is another identifier (a port's number where its name is asked for?); write the name",
                error.field_path(),
                crate::text::short_value(value),
            );
            return self.refuse_with_hint(at, hint);
        }
        if let Some(sibling) = self.sibling_taking(object, at, value) {
            let hint = format!(
                "{}: the {} {} is not turned into {}: {sibling} takes it as it is (was it meant there?); move it, or write the value as you meant it",
                error.field_path(),
                if value.is_number() { "number" } else { "value" },
                crate::text::short_value(value),
                crate::text::short_value(&new),
            );
            return self.refuse_with_hint(at, hint);
        }
        let reason = if expected == "array" {
            "a single value where a list is expected"
        } else {
            "type coercion"
        };
        Some(value_proposal(
            at,
            new,
            "coerce",
            reason,
            Verify::NoTypeErrorAt,
        ))
    }

    /// One object where a list is expected is that list's one item when the item's schema
    /// takes it as it is (`secretStoreRef: {name, kind}` renamed to the list `secretStoreRefs`),
    /// as one scalar is: every word kept, nothing added. An object the item's schema refuses
    /// (a map keyed by names where items are structures) is another shape, not one item.
    fn object_as_item(&mut self, at: &str, value: &Value, node: &Value) -> Option<Proposal> {
        let items = node.get("items")?;
        if !crate::certainty::accepts(items, value) {
            self.refuse(format!(
                "not repaired {at}: the object is no item of the list (the item's schema refuses it as it is)"
            ));
            return None;
        }
        Some(value_proposal(
            at,
            Value::Array(vec![value.clone()]),
            "coerce",
            "a single object where a list of them is expected",
            Verify::NoTypeErrorAt,
        ))
    }

    /// Refuses the repair at `at` and keeps `hint` for the rejection (once). Always `None`.
    fn refuse_with_hint(&mut self, at: &str, hint: String) -> Option<Proposal> {
        self.refuse(format!("not repaired {at}: {hint}"));
        if !self.hints.contains(&hint) {
            self.hints.push(hint);
        }
        None
    }

    /// A number or boolean the user wrote where text is expected is certain to be that text
    /// only when no field beside it, still unset, takes the value as it is (`port: 9090` where
    /// `port` is a name and `targetPort` a number: the number may be in the wrong field). The
    /// first such field, named.
    fn sibling_taking(&self, object: &Value, at: &str, value: &Value) -> Option<String> {
        if !(value.is_number() || value.is_boolean()) {
            return None;
        }
        let (parent, _) = pointer::split_last(at)?;
        crate::certainty::unset_siblings(self.ctx.schema, object, at)
            .into_iter()
            .find(|(_, node)| crate::certainty::accepts(node, value))
            .map(|(name, _)| pointer::to_field_path(&pointer::push(parent, name)))
    }

    fn dns(&mut self, object: &Value, at: &str, rule: &str) -> Option<Proposal> {
        if !dns::asks_for_dns(rule) {
            return None;
        }
        let value = object.pointer(at)?.as_str()?;
        // `sectionName: "port 443"` beside an unset `port` is about that field, not a name
        // written with blanks.
        if let Some((field, _)) =
            crate::certainty::names_sibling(self.ctx.schema, object, at, value)
        {
            let hint = format!(
                "{} names {}, a field beside it that takes the rest: the value may be meant for that field",
                crate::text::quote(&Value::from(value), 40),
                pointer::to_field_path(&field)
            );
            return self.refuse_with_hint(at, hint);
        }
        let dots = dns::allows_dots(rule);
        let max_len = schema::node_at(self.ctx.schema, at)
            .and_then(|n| n.get("maxLength"))
            .and_then(Value::as_u64)
            .map(|n| n as usize)
            .unwrap_or(if dots { 253 } else { 63 });
        dns::normalise(value, dots, max_len).map(|name| {
            value_proposal(
                at,
                Value::String(name),
                "dns1123",
                "DNS-1123",
                Verify::NoErrorAt,
            )
        })
    }

    /// Applies one proposal after the guardrail check; `None` when refused or a no-op.
    fn apply(&mut self, object: &mut Value, p: Proposal) -> Option<Applied> {
        let settings = self.ctx.settings;
        let key = p.key();
        let check = match &p.edit {
            Edit::Move { from } => guardrails::check_relocation(settings, from, &p.path),
            _ => guardrails::check_path(settings, &p.path),
        };
        if let Err(v) = check {
            self.tried.insert(key);
            self.refuse(format!(
                "refused {} ({}): {}",
                p.origin(),
                p.reason,
                v.message
            ));
            return None;
        }
        let edited = match &p.edit {
            Edit::Set(value) => set_edit(object, &p.path, value),
            Edit::Remove => remove_at(object, &p.path).map(|old| Edited {
                from: None,
                old: Some(old),
                new: None,
                undo: None,
            }),
            Edit::Move { from } => self.move_edit(object, &p.path, from),
        };
        let Some(edited) = edited else {
            self.tried.insert(key);
            return None;
        };
        let mut reason = p.reason;
        if let Some(from) = &edited.from {
            if guardrails::check_path(settings, &p.path).is_err()
                || guardrails::check_path(settings, from).is_err()
            {
                reason.push_str("; protected path: your own value, verbatim");
            }
        }
        Some(Applied {
            change: Change {
                path: p.path,
                from: edited.from,
                old: edited.old,
                new: edited.new,
                reason,
                source: ChangeSource::Rule {
                    rule: p.rule.to_string(),
                },
            },
            verify: p.verify,
            undo: edited.undo,
        })
    }

    /// Moves the value at `from` to `path` (creating its parents), and removes the parents
    /// the move left empty.
    fn move_edit(&self, object: &mut Value, path: &str, from: &str) -> Option<Edited> {
        if object.pointer(path).is_some() {
            return None;
        }
        let value = remove_at(object, from)?;
        if !insert_creating(object, path, value.clone()) {
            // Put it back where it was; the parent still exists.
            set_at(object, from, value);
            return None;
        }
        self.prune_emptied(object, from);
        Some(Edited {
            from: Some(from.to_string()),
            old: None,
            new: Some(value),
            undo: None,
        })
    }

    /// After a move, removes parent objects the move left empty (not an allowed root, not
    /// required, not protected).
    fn prune_emptied(&self, object: &mut Value, from: &str) {
        let settings = self.ctx.settings;
        let mut at = match pointer::split_last(from) {
            Some((parent, _)) => parent.to_string(),
            None => return,
        };
        while !at.is_empty() && !settings.is_allowed_root(&at) {
            let empty = object
                .pointer(&at)
                .and_then(Value::as_object)
                .is_some_and(|m| m.is_empty());
            if !empty || guardrails::check_empty_removal(settings, &at).is_err() {
                return;
            }
            let Some((parent, name)) = pointer::split_last(&at) else {
                return;
            };
            let required = schema::node_at(self.ctx.schema, parent)
                .and_then(|n| n.get("required"))
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|k| k.as_str() == Some(name.as_str())));
            if required {
                return;
            }
            remove_at(object, &at);
            at = parent.to_string();
        }
    }
}

/// Why a string wrapped whole into a list would be only one reading of several: it holds a list
/// separator, or blanks or names joined by `:` or `|` in a list of free text
/// (`coerce::may_be_several_items`).
fn one_reading_of_several(value: &Value, item_node: Option<&Value>) -> Option<&'static str> {
    let s = value.as_str()?;
    if coerce::holds_list_separator(s) {
        return Some("the string holds a list separator; wrapped whole it would become one item that names none of them");
    }
    if coerce::may_be_several_names(s, item_node) {
        return Some("the string joins names with a colon or a bar, as some lists are written; wrapped whole into a list it is only one reading");
    }
    coerce::may_be_several_items(s, item_node).then_some(
        "the string has blanks in it; it may be several items, or one with a remark, so wrapped whole into a list it is only one reading",
    )
}

/// The other items of the list the value at `at` is in, if it is in one.
fn other_items<'v>(object: &'v Value, at: &str) -> Vec<&'v Value> {
    let Some((parent, index)) = pointer::split_last(at) else {
        return Vec::new();
    };
    let (Ok(index), Some(items)) = (
        index.parse::<usize>(),
        object.pointer(parent).and_then(Value::as_array),
    ) else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != index)
        .map(|(_, v)| v)
        .collect()
}

fn value_proposal(
    at: &str,
    value: Value,
    rule: &'static str,
    reason: &str,
    verify: Verify,
) -> Proposal {
    Proposal {
        path: at.to_string(),
        edit: Edit::Set(value),
        rule,
        reason: reason.to_string(),
        verify,
        priority: PRIORITY_VALUE,
    }
}

/// Sets the value at `at` (the parent must exist; an array index must exist).
/// What an applied edit did: the value before and after, where a moved value came from, and
/// what undoing it puts back (`Some(None)`: remove the value again).
struct Edited {
    from: Option<String>,
    old: Option<Value>,
    new: Option<Value>,
    undo: Option<Option<Value>>,
}

fn set_edit(object: &mut Value, path: &str, value: &Value) -> Option<Edited> {
    let old = object.pointer(path).cloned();
    if old.as_ref() == Some(value) || !set_at(object, path, value.clone()) {
        return None;
    }
    Some(Edited {
        from: None,
        old: old.clone(),
        new: Some(value.clone()),
        undo: Some(old),
    })
}

fn set_at(object: &mut Value, at: &str, value: Value) -> bool {
    let Some((parent, key)) = pointer::split_last(at) else {
        return false;
    };
    match object.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.insert(key, value);
            true
        }
        Some(Value::Array(items)) => match key.parse::<usize>() {
            Ok(i) if i < items.len() => {
                items[i] = value;
                true
            }
            _ => false,
        },
        _ => false,
    }
}

/// Removes and returns the property at `at` (objects only: removing an array item would
/// shift the others).
fn remove_at(object: &mut Value, at: &str) -> Option<Value> {
    let (parent, key) = pointer::split_last(at)?;
    object.pointer_mut(parent)?.as_object_mut()?.remove(&key)
}

/// Inserts at `at`, creating missing parent objects.
fn insert_creating(object: &mut Value, at: &str, value: Value) -> bool {
    let tokens = pointer::tokens(at);
    let Some((last, parents)) = tokens.split_last() else {
        return false;
    };
    let mut node = object;
    for token in parents {
        node = match node {
            Value::Object(map) => map
                .entry(token.clone())
                .or_insert_with(|| Value::Object(Default::default())),
            // Through an existing list item (a key misspelt inside one); never a new item.
            Value::Array(items) => match token.parse::<usize>().ok().and_then(|i| items.get_mut(i))
            {
                Some(item) => item,
                None => return false,
            },
            _ => return false,
        };
    }
    match node.as_object_mut() {
        Some(map) if !map.contains_key(last) => {
            map.insert(last.clone(), value);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;
