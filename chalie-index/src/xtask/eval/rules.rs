//! The eval's trade-off table: the cascade's keep rules ([`KeepRule`]) applied by the
//! index itself to each query's raw ranking, scored on recall (over all queries and per half
//! of the catalog) and on two kinds of abstention.

use super::Tally;
use crate::{Activation, Ceiling, FindOptions, Index, KeepRule};

/// Which half of the catalog a query's gold tools belong to: in a mixed catalog
/// (`--examples-for half`) half A has example phrases and half B none.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Half {
    A,
    B,
    Both,
}

/// One in-catalog query: its raw ranking, the ranking once its gold tools are removed (both
/// as ordinal and distance, best first), its gold tools and their half.
pub(super) struct Row<'a> {
    pub(super) ranked: Vec<(usize, f32)>,
    pub(super) without_gold: Vec<(usize, f32)>,
    pub(super) gold: &'a [String],
    pub(super) half: Half,
}

/// The rules the table sweeps: the absolute ceiling, a ceiling per kind of descriptor and a
/// ceiling calibrated per descriptor, each keeping what passes or, once one passes, the
/// whole ranking.
fn rules() -> Vec<KeepRule> {
    let mut ceilings: Vec<Ceiling> = [0.55, 0.60, 0.65, 0.70, 0.75, 0.80]
        .into_iter()
        .map(Ceiling::Absolute)
        .collect();
    for without_examples in [0.70, 0.75] {
        for with_examples in [0.50, 0.55, 0.60, 0.65] {
            ceilings.push(Ceiling::PerKind {
                with_examples,
                without_examples,
            });
        }
        for margin in [0.0, 0.05, 0.10, 0.15, 0.20] {
            ceilings.push(Ceiling::Calibrated {
                margin,
                without_examples,
            });
        }
    }
    let within = ceilings.iter().map(|c| KeepRule::Within(*c));
    let whole = ceilings
        .iter()
        .map(|c| KeepRule::WholeRankingOncePassed(*c));
    within.chain(whole).collect()
}

/// The table: per rule, R@5 and mean set over `rows` (and R@5 per half when both halves have
/// queries), abstention with the gold tools removed, and abstention on `foreign` (each
/// out-of-catalog request's raw ranking).
pub(super) fn table(index: &Index, rows: &[Row<'_>], foreign: &[Vec<(usize, f32)>]) -> String {
    let halves = [Half::A, Half::B].map(|h| rows.iter().filter(|r| r.half == h).count());
    let split = halves.iter().all(|n| *n > 0);
    let mut out = String::from(
        "\nkeep rules (vector rung): R@5, mean set, abstention gold removed, abstention out of catalog",
    );
    if split {
        out += &format!(
            ", R@5 half A ({} q.), R@5 half B ({} q.)",
            halves[0], halves[1]
        );
    }
    out += "\n";
    let names = |kept: Vec<(usize, f32)>| -> Vec<String> {
        kept.into_iter()
            .map(|(ordinal, _)| index.entries[ordinal].qualified.clone())
            .collect()
    };
    if split {
        let mut by_half = [Tally::default(), Tally::default()];
        for row in rows.iter().filter(|r| r.half != Half::Both) {
            let ranked = names(row.ranked.clone());
            by_half[usize::from(row.half == Half::B)].add(&ranked, row.gold);
        }
        out += &format!(
            "  {:<62} R@5 half A {:.3}, half B {:.3}\n",
            "raw ranking",
            by_half[0].r5(),
            by_half[1].r5()
        );
    }
    for rule in rules() {
        let (mut tally, mut by_half) = (Tally::default(), [Tally::default(), Tally::default()]);
        let mut abstained = 0usize;
        for row in rows {
            let kept = names(index.kept(rule, row.ranked.clone()));
            tally.add(&kept, row.gold);
            match row.half {
                Half::A => by_half[0].add(&kept, row.gold),
                Half::B => by_half[1].add(&kept, row.gold),
                Half::Both => {}
            }
            if index.kept(rule, row.without_gold.clone()).is_empty() {
                abstained += 1;
            }
        }
        let out_of_catalog = if foreign.is_empty() {
            "-".to_owned()
        } else {
            let abstained = foreign
                .iter()
                .filter(|ranked| index.kept(rule, (*ranked).clone()).is_empty())
                .count();
            format!("{:.3}", abstained as f64 / foreign.len() as f64)
        };
        let n = rows.len().max(1) as f64;
        out += &format!(
            "  {:<62} {:.3}  {:.2}  {:.3}  {out_of_catalog}",
            rule.to_string(),
            tally.recall[2] / n,
            tally.size / n,
            abstained as f64 / n,
        );
        if split {
            out += &format!("  {:.3}  {:.3}", by_half[0].r5(), by_half[1].r5());
        }
        out += "\n";
    }
    out
}

/// The activation rules the second table sweeps: a ceiling per kind of descriptor, a margin
/// to the closest shown hit and a cap per entry.
fn activations() -> Vec<Activation> {
    let mut list = vec![Activation::EVERY_SHOWN];
    for (with_examples, without_examples) in [
        (0.45, 0.60),
        (0.50, 0.60),
        (0.50, 0.65),
        (0.55, 0.60),
        (0.55, 0.65),
        (0.60, 0.65),
        (0.60, 0.70),
        (0.65, 0.75),
    ] {
        for margin in [0.02, 0.05, 0.10, f32::INFINITY] {
            for most in [1, 2, 3] {
                list.push(Activation {
                    ceiling: Ceiling::PerKind {
                        with_examples,
                        without_examples,
                    },
                    margin,
                    most,
                });
            }
        }
    }
    list
}

/// The second table: with `keep` showing hits, per activation rule, the share of queries
/// whose gold tool is shown (activated or suggested) and activated, the tools activated per
/// entry, and abstention (nothing activated) with the gold tools removed and out of catalog.
pub(super) fn activation_table(
    index: &Index,
    keep: KeepRule,
    rows: &[Row<'_>],
    foreign: &[Vec<(usize, f32)>],
) -> String {
    let mut out = format!(
        "
activation rules (vector rung, showing {keep}): shown-recall, activated R@5, activated per entry, abstention gold removed, abstention out of catalog, activated per out-of-catalog entry\n"
    );
    let names = |hits: &[(usize, f32)]| -> Vec<String> {
        hits.iter()
            .map(|(ordinal, _)| index.entries[*ordinal].qualified.clone())
            .collect()
    };
    for activate in activations() {
        let options = FindOptions {
            keep,
            activate,
            ..FindOptions::default()
        };
        let (mut shown, mut activated) = (Tally::default(), Tally::default());
        let mut abstained = 0usize;
        for row in rows {
            let (on, named) = index.shown(&options, row.ranked.clone());
            let all: Vec<(usize, f32)> = on.iter().chain(&named).copied().collect();
            shown.add(&names(&all), row.gold);
            activated.add(&names(&on), row.gold);
            if index.shown(&options, row.without_gold.clone()).0.is_empty() {
                abstained += 1;
            }
        }
        let (mut foreign_abstained, mut foreign_activated) = (0usize, 0usize);
        for ranked in foreign {
            let on = index.shown(&options, ranked.clone()).0;
            foreign_activated += on.len();
            if on.is_empty() {
                foreign_abstained += 1;
            }
        }
        let n = rows.len().max(1) as f64;
        let m = foreign.len().max(1) as f64;
        let out_of_catalog = if foreign.is_empty() {
            "-  -".to_owned()
        } else {
            format!(
                "{:.3}  {:.2}",
                foreign_abstained as f64 / m,
                foreign_activated as f64 / m
            )
        };
        out += &format!(
            "  {:<72} {:.3}  {:.3}  {:.2}  {:.3}  {out_of_catalog}\n",
            activate.to_string(),
            shown.r5(),
            activated.r5(),
            activated.size / n,
            abstained as f64 / n,
        );
    }
    out
}
