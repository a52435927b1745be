//! The envelope under a million hostile results (set
//! `CHALIE_ENVELOPE_FUZZ_CASES`; CI runs fewer): for a reader breaking
//! lines at every separator, no line but the first and the last is
//! tag-shaped, and `Envelope::parse` gives back exactly what was rendered.

#[path = "../support/hostile.rs"]
mod hostile;

use chalie_core::{envelope::Envelope, envelope::render_envelope};
use hostile::Rng;

/// What a debug build runs in about a second.
const CI_CASES: u64 = 20_000;

#[test]
fn no_hostile_result_escapes_the_envelope_or_changes_on_the_way() {
    let cases = hostile::cases(CI_CASES);
    for case in 0..cases {
        let mut rng = Rng::for_case(case);
        // Most calls name a registered tool; some name anything at all.
        let tool = if rng.one_in(4) {
            rng.text(4)
        } else {
            "weather".to_owned()
        };
        let action = rng.one_in(3).then(|| rng.text(4));
        let result = rng.result();
        let text = render_envelope(&tool, action.as_deref(), &result);
        let checked = Envelope::parse(&text)
            .map_err(|error| error.to_string())
            .and_then(|envelope| {
                if !tool.is_empty()
                    && tool.len() <= 128
                    && envelope.tool != tool
                    && tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    return Err(format!("tool {:?} read back as {:?}", tool, envelope.tool));
                }
                hostile::check_lines(&text, &envelope)?;
                hostile::check_round_trip(&result, action.as_deref(), &envelope)
            });
        if let Err(problem) = checked {
            panic!(
                "case {case}: {problem}\nresult: {result:?}\naction: {action:?}\nenvelope: {text:?}"
            );
        }
    }
}
