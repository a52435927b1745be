use chalie_core::Params;

#[derive(Params)]
struct NoteParams {
    /// The note.
    text: String,
    /// A summary.
    act_summary: String,
}

fn main() {}
