//! The eval's trade-off table: keep rules for the vector rung applied to the raw rankings,
//! each swept over its ceiling, scored on recall and on two kinds of abstention.

use super::Tally;

/// One in-catalog query: its raw ranking with distances, the distance of the nearest tool
/// once its gold tools are removed, and its gold tools.
pub(super) struct Row<'a> {
    pub(super) ranked: Vec<(String, f32)>,
    pub(super) best_without_gold: f32,
    pub(super) gold: &'a [String],
}

/// A keep rule: which of a raw ranking (best first, cosine distances) the rung returns.
#[derive(Clone, Copy)]
enum Rule {
    /// Every neighbour within the ceiling (the cascade's rule).
    Ceiling,
    /// Nothing unless the best neighbour is within the ceiling; then the others within
    /// `margin` of the best's distance.
    Relative { margin: f32 },
}

impl Rule {
    fn label(self) -> String {
        match self {
            Rule::Ceiling => "absolute ceiling".to_owned(),
            Rule::Relative { margin } if margin.is_infinite() => {
                "best within ceiling, then all top 5".to_owned()
            }
            Rule::Relative { margin } => format!("best within ceiling, then best + {margin:.2}"),
        }
    }

    fn keep(self, ranked: &[(String, f32)], ceiling: f32) -> Vec<String> {
        let Some(best) = ranked.first().map(|(_, d)| *d) else {
            return Vec::new();
        };
        let bound = match self {
            Rule::Ceiling => ceiling,
            Rule::Relative { .. } if best > ceiling => return Vec::new(),
            Rule::Relative { margin } => best + margin,
        };
        ranked
            .iter()
            .filter(|(_, d)| *d <= bound)
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// The table: per rule and ceiling, R@5 and mean set over `rows`, abstention with the gold
/// tools removed, and abstention on `foreign` (each out-of-catalog request's best distance).
pub(super) fn table(rows: &[Row<'_>], foreign: &[f32]) -> String {
    let n = rows.len().max(1) as f64;
    let mut out = String::from(
        "\nkeep rules (vector rung): ceiling, R@5, mean-set, abstention gold removed, abstention out of catalog\n",
    );
    let rules = [
        Rule::Ceiling,
        Rule::Relative { margin: 0.05 },
        Rule::Relative { margin: 0.10 },
        Rule::Relative {
            margin: f32::INFINITY,
        },
    ];
    for rule in rules {
        out += &format!("{}\n", rule.label());
        for step in 0..=8 {
            let ceiling = 0.45 + 0.05 * step as f32;
            let mut tally = Tally::default();
            let mut abstained = 0usize;
            for row in rows {
                tally.add(&rule.keep(&row.ranked, ceiling), row.gold);
                // Every rule abstains exactly when the best remaining neighbour is past
                // the ceiling.
                if row.best_without_gold > ceiling {
                    abstained += 1;
                }
            }
            let foreign_abstained = foreign.iter().filter(|d| **d > ceiling).count();
            let out_of_catalog = if foreign.is_empty() {
                "-".to_owned()
            } else {
                format!("{:.3}", foreign_abstained as f64 / foreign.len() as f64)
            };
            out += &format!(
                "  {ceiling:.2}  {:.3}  {:.2}  {:.3}  {out_of_catalog}\n",
                tally.recall[2] / n,
                tally.size / n,
                abstained as f64 / n,
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked(distances: &[f32]) -> Vec<(String, f32)> {
        distances
            .iter()
            .enumerate()
            .map(|(i, d)| (format!("t{i}"), *d))
            .collect()
    }

    #[test]
    fn the_relative_rule_keeps_what_the_ceiling_cuts_once_the_best_passes() {
        let list = ranked(&[0.60, 0.68, 0.74, 0.90]);
        assert_eq!(Rule::Ceiling.keep(&list, 0.70), ["t0", "t1"]);
        assert_eq!(
            Rule::Relative { margin: 0.15 }.keep(&list, 0.70),
            ["t0", "t1", "t2"]
        );
        assert_eq!(
            Rule::Relative {
                margin: f32::INFINITY
            }
            .keep(&list, 0.70)
            .len(),
            4
        );
        assert!(Rule::Relative { margin: 0.15 }.keep(&list, 0.55).is_empty());
    }
}
