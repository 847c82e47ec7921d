//! Sorting through one shared instantiation of the standard library's sort.
//!
//! The standard sorts are fast and large: each element type and comparator they are
//! instantiated with adds its own copy, several kilobytes of wasm, and the package is built
//! for size. The sorts here order a list of positions instead, with the comparator behind a
//! reference, so every caller shares one copy; the list is then put in that order in place.
//! Sorts on a hot path (ranking a search's hits) keep their own instantiation.

use std::cmp::Ordering;

/// Sorts `items` by `compare`, stably (equal items keep their order).
pub fn sort_by<T>(items: &mut [T], compare: impl Fn(&T, &T) -> Ordering) {
    let mut order: Vec<usize> = (0..items.len()).collect();
    sort_positions(&mut order, &|a, b| compare(&items[a], &items[b]));
    permute(items, order);
}

/// Sorts `items` in their natural order, stably.
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// Sorts `items` by `key`, stably.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// The one instantiation of the standard (stable) sort.
fn sort_positions(order: &mut [usize], compare: &dyn Fn(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| compare(a, b));
}

/// Moves the item at `order[i]` to `i`, for every `i`, by following each cycle of the
/// permutation with swaps.
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    const DONE: usize = usize::MAX;
    for start in 0..items.len() {
        let mut at = start;
        loop {
            let from = std::mem::replace(&mut order[at], DONE);
            if from == DONE || from == start {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_as_the_standard_stable_sort_does() {
        let mut next = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15);
        for len in 0..64 {
            // Few distinct keys, so stability shows.
            let items: Vec<(usize, usize)> = (0..len).map(|i| (next(5), i)).collect();
            let mut expected = items.clone();
            expected.sort_by_key(|&(key, _)| key);
            let mut sorted = items.clone();
            sort_by_key(&mut sorted, |&(key, _)| key);
            assert_eq!(sorted, expected, "{items:?}");
            let mut natural = items.clone();
            sort(&mut natural);
            let mut std_natural = items;
            std_natural.sort();
            assert_eq!(natural, std_natural);
        }
    }
}
