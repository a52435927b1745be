//! The vector rung's keep rule: which of an entry's nearest descriptors `find` returns, and
//! the per-descriptor reach a build measures for it.

/// The cosine distance a vector neighbour must pass, per descriptor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ceiling {
    /// One distance for every descriptor.
    Absolute(f32),
    /// One distance for descriptors with example phrases, another for those without: a
    /// request lands closer to phrases worded like requests than to a summary.
    PerKind {
        /// For descriptors with at least one example phrase.
        with_examples: f32,
        /// For descriptors with none (most external tools).
        without_examples: f32,
    },
    /// For a descriptor with example phrases, its own reach (measured at build time: for
    /// each example phrase, the cosine distance to the closest of the descriptor's other
    /// texts, and the largest of these) plus `margin`; for one without, `without_examples`.
    Calibrated {
        /// Added to each descriptor's reach.
        margin: f32,
        /// For descriptors with no example phrase, which have no reach.
        without_examples: f32,
    },
}

impl Ceiling {
    /// The ceiling of a descriptor whose reach is `reach` (`None`: it has no examples).
    pub fn of(self, reach: Option<f32>) -> f32 {
        match (self, reach) {
            (Ceiling::Absolute(ceiling), _) => ceiling,
            (Ceiling::PerKind { with_examples, .. }, Some(_)) => with_examples,
            (
                Ceiling::PerKind {
                    without_examples, ..
                }
                | Ceiling::Calibrated {
                    without_examples, ..
                },
                None,
            ) => without_examples,
            (Ceiling::Calibrated { margin, .. }, Some(reach)) => reach + margin,
        }
    }
}

impl std::fmt::Display for Ceiling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ceiling::Absolute(ceiling) => write!(f, "{ceiling:.2}"),
            Ceiling::PerKind {
                with_examples,
                without_examples,
            } => write!(
                f,
                "{with_examples:.2} with examples, {without_examples:.2} without"
            ),
            Ceiling::Calibrated {
                margin,
                without_examples,
            } => write!(
                f,
                "reach + {margin:.2}, {without_examples:.2} without examples"
            ),
        }
    }
}

/// What the vector rung keeps of an entry's ranking (best first, at most
/// [`FindOptions::per_entry`](crate::FindOptions::per_entry) descriptors).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeepRule {
    /// Each neighbour within its own ceiling.
    Within(Ceiling),
    /// Nothing unless a neighbour passes its own ceiling; then the whole ranking. The gold
    /// tool is often not the best hit and sits just past a ceiling the best one passes.
    WholeRankingOncePassed(Ceiling),
}

impl KeepRule {
    /// Which of `ranked` (distance and reach of each descriptor, best first) to keep.
    pub fn keeps(self, ranked: &[(f32, Option<f32>)]) -> Vec<bool> {
        let passes = |&(distance, reach): &(f32, Option<f32>)| distance <= self.ceiling().of(reach);
        match self {
            KeepRule::Within(_) => ranked.iter().map(passes).collect(),
            KeepRule::WholeRankingOncePassed(_) => {
                let any = ranked.iter().any(passes);
                vec![any; ranked.len()]
            }
        }
    }

    /// The ceiling the rule applies.
    pub fn ceiling(self) -> Ceiling {
        match self {
            KeepRule::Within(ceiling) | KeepRule::WholeRankingOncePassed(ceiling) => ceiling,
        }
    }
}

impl std::fmt::Display for KeepRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeepRule::Within(ceiling) => write!(f, "each within {ceiling}"),
            KeepRule::WholeRankingOncePassed(ceiling) => {
                write!(f, "the whole ranking once one passes {ceiling}")
            }
        }
    }
}

/// Which of the hits a [`KeepRule`] shows `find` activates (adds to the model's tool list);
/// the others are only named, with their summary's first sentence, for the model to ask for
/// by exact name.
///
/// A hit is activated when it passes its own ceiling, lies within `margin` of the closest
/// shown hit, and is among the first `most` that do. The keep rule buys recall with the whole
/// ranking; activation spends the context only on confident matches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Activation {
    /// The cosine distance a hit must pass to be activated, per descriptor.
    pub ceiling: Ceiling,
    /// How much farther than the closest shown hit an activated one may be.
    pub margin: f32,
    /// Most hits one entry activates.
    pub most: usize,
}

impl Activation {
    /// Activates every shown hit: the behaviour before activation was separate from showing.
    pub const EVERY_SHOWN: Activation = Activation {
        ceiling: Ceiling::Absolute(f32::INFINITY),
        margin: f32::INFINITY,
        most: usize::MAX,
    };

    /// Which of `shown` (distance and reach of each hit the keep rule kept, best first) to
    /// activate.
    pub fn activates(self, shown: &[(f32, Option<f32>)]) -> Vec<bool> {
        let closest = shown
            .iter()
            .map(|(distance, _)| *distance)
            .fold(f32::INFINITY, f32::min);
        let mut left = self.most;
        shown
            .iter()
            .map(|&(distance, reach)| {
                let confident =
                    distance <= self.ceiling.of(reach) && distance <= closest + self.margin;
                let activated = confident && left > 0;
                if activated {
                    left -= 1;
                }
                activated
            })
            .collect()
    }
}

impl std::fmt::Display for Activation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if *self == Activation::EVERY_SHOWN {
            return write!(f, "activate every shown hit");
        }
        write!(f, "activate within {}", self.ceiling)?;
        if self.margin.is_finite() {
            write!(f, ", {:.2} of the closest", self.margin)?;
        }
        write!(f, ", at most {}", self.most)
    }
}

/// How far from the rest of its vectors a descriptor's own requests land: for each example
/// phrase, the cosine distance to the closest of the descriptor's other texts (its summary
/// text and other examples), and the largest of these. `None` without examples.
///
/// Each example stands in for a request the descriptor should answer that the index has not
/// seen; leaving it out and asking how close the rest comes is what a new request of that
/// kind meets at search time. `vectors` are unit vectors, the summary text's first.
pub(crate) fn reach(vectors: &[&Vec<f32>]) -> Option<f32> {
    let distance = |a: &[f32], b: &[f32]| 1.0 - a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    (1..vectors.len())
        .map(|held_out| {
            vectors
                .iter()
                .enumerate()
                .filter(|(other, _)| *other != held_out)
                .map(|(_, other)| distance(vectors[held_out], other))
                .fold(f32::INFINITY, f32::min)
        })
        .reduce(f32::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reach_is_the_farthest_example_from_the_rest() {
        let summary = vec![1.0, 0.0];
        let close = vec![0.8, 0.6];
        let far = vec![0.0, 1.0];
        // `close` is 0.2 from the summary; `far` is 0.4 from `close`, its nearest.
        let reach = reach(&[&summary, &close, &far]).expect("examples");
        assert!((reach - 0.4).abs() < 1e-6, "{reach}");
        assert_eq!(super::reach(&[&summary]), None);
    }

    #[test]
    fn each_kind_of_descriptor_meets_its_own_ceiling() {
        let per_kind = Ceiling::PerKind {
            with_examples: 0.6,
            without_examples: 0.75,
        };
        assert_eq!(per_kind.of(Some(0.1)), 0.6);
        assert_eq!(per_kind.of(None), 0.75);
        let calibrated = Ceiling::Calibrated {
            margin: 0.1,
            without_examples: 0.75,
        };
        assert!((calibrated.of(Some(0.45)) - 0.55).abs() < 1e-6);
        assert_eq!(calibrated.of(None), 0.75);
    }

    #[test]
    fn only_confident_hits_near_the_closest_are_activated() {
        let activation = Activation {
            ceiling: Ceiling::PerKind {
                with_examples: 0.55,
                without_examples: 0.65,
            },
            margin: 0.05,
            most: 2,
        };
        // Ranked by pooled mass, so the closest need not come first.
        let shown = [
            (0.48, Some(0.3)),
            (0.45, Some(0.3)),
            (0.52, None),
            (0.49, Some(0.3)),
            (0.56, Some(0.3)),
        ];
        // 0.49 is within 0.05 of 0.45 but the cap of 2 is spent; 0.52 is farther than 0.05 from
        // the closest; 0.56 misses its ceiling.
        assert_eq!(
            activation.activates(&shown),
            [true, true, false, false, false]
        );
        let far = [(0.60, Some(0.3)), (0.62, None)];
        assert_eq!(activation.activates(&far), [false, true]);
        assert_eq!(Activation::EVERY_SHOWN.activates(&far), [true, true]);
    }

    #[test]
    fn the_whole_ranking_comes_back_only_once_one_passes() {
        let ranked = [(0.62, Some(0.4)), (0.68, None), (0.74, None)];
        let calibrated = Ceiling::Calibrated {
            margin: 0.1,
            without_examples: 0.70,
        };
        // The best misses its own ceiling (0.50); the second passes the one without examples.
        assert_eq!(
            KeepRule::Within(calibrated).keeps(&ranked),
            [false, true, false]
        );
        assert_eq!(
            KeepRule::WholeRankingOncePassed(calibrated).keeps(&ranked),
            [true; 3]
        );
        assert_eq!(
            KeepRule::WholeRankingOncePassed(Ceiling::Absolute(0.6)).keeps(&ranked),
            [false; 3]
        );
    }
}
