//! cel-go's sets extension (`sets.contains`, `sets.equivalent`, `sets.intersects`, Kubernetes
//! 1.29+) and the lists extension v3's `first`/`last` (Kubernetes 1.34), which the `cel` crate's
//! lists extension lacks. Elements compare with CEL equality (`1 == 1.0`).

use cel::common::types::{CelBool, CelOptional, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::owned;

/// The elements of a list argument.
fn items<'a, 'v>(val: &'a (dyn Val + 'v)) -> Result<Vec<&'a (dyn Val + 'v)>, ExecutionError> {
    let iterable = val
        .as_iterable()
        .ok_or_else(|| ExecutionError::UnexpectedType {
            got: val.get_type().name().to_owned(),
            want: "list".to_owned(),
        })?;
    let mut out = Vec::new();
    let mut it = iterable.iter();
    while let Some(item) = it.next() {
        out.push(item);
    }
    Ok(out)
}

fn two<'a, 'b, 'v>(
    args: &'a [CowVal<'b, 'v>],
) -> Result<(&'a (dyn Val + 'v), &'a (dyn Val + 'v)), ExecutionError> {
    match args {
        [a, b] => Ok((a.as_ref(), b.as_ref())),
        _ => Err(ExecutionError::invalid_argument_count(2, args.len())),
    }
}

/// Every element of `sub` is in `list`.
fn contains_all(list: &[&dyn Val], sub: &[&dyn Val]) -> bool {
    sub.iter().all(|s| list.iter().any(|l| l.equals(*s)))
}

fn sets_contains<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two(&args)?;
    let result = contains_all(&items(a)?, &items(b)?);
    Ok(owned(CelBool::from(result)))
}

fn sets_equivalent<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two(&args)?;
    let (a, b) = (items(a)?, items(b)?);
    Ok(owned(CelBool::from(
        contains_all(&a, &b) && contains_all(&b, &a),
    )))
}

fn sets_intersects<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two(&args)?;
    let (a, b) = (items(a)?, items(b)?);
    let result = a.iter().any(|x| b.iter().any(|y| x.equals(*y)));
    Ok(owned(CelBool::from(result)))
}

fn end<'b, 'v>(args: Vec<CowVal<'b, 'v>>, last: bool) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [list] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(1, args.len()));
    };
    let items = items(list.as_ref())?;
    let item = if last { items.last() } else { items.first() };
    Ok(CowVal::Owned(Box::new(match item {
        Some(v) => CelOptional::of(v.clone_as_boxed()),
        None => CelOptional::none(),
    })))
}

fn first<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    end(args, false)
}

fn last<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    end(args, true)
}

pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let lists = || vec![LIST_TYPE, LIST_TYPE];
    env.add_overload(
        "sets.contains",
        "list_sets_contains_list",
        lists(),
        sets_contains,
    )?;
    env.add_overload(
        "sets.equivalent",
        "list_sets_equivalent_list",
        lists(),
        sets_equivalent,
    )?;
    env.add_overload(
        "sets.intersects",
        "list_sets_intersects_list",
        lists(),
        sets_intersects,
    )?;
    env.add_member_overload("first", "list_first", LIST_TYPE, vec![], first)?;
    env.add_member_overload("last", "list_last", LIST_TYPE, vec![], last)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::all_pass;

    #[test]
    fn sets() {
        all_pass(&[
            "sets.contains([], []) && sets.contains([1, 2, 3, 4], [2, 3])",
            "!sets.contains([1, 2, 3], [4]) && sets.contains([1, 2.0, 3u], [1.0, 2u, 3])",
            "sets.equivalent([], []) && sets.equivalent([1], [1, 1])",
            "sets.equivalent([1], [1u, 1.0]) && !sets.equivalent([1, 2], [2, 2, 2])",
            "sets.intersects([1], [1]) && sets.intersects([1], [1.0, 2])",
            "!sets.intersects([1], []) && !sets.intersects([1], [2])",
        ]);
    }

    #[test]
    fn first_and_last() {
        all_pass(&[
            "[1, 2, 3].first() == optional.of(1) && [1, 2, 3].last() == optional.of(3)",
            "![].first().hasValue() && [].last().orValue(7) == 7",
        ]);
    }
}
