//! The name index: every discoverable name, cut into trigrams, in tantivy. It finds
//! candidates; the segment gate in [`segment_gate`] decides which of them count.

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::{LowerCaser, NgramTokenizer, TextAnalyzer, TokenStream};
use tantivy::{IndexReader, ReloadPolicy, TantivyDocument, Term};

use crate::error::IndexError;
use crate::manifest::corrupt;

/// Sub-folder of the index holding the tantivy files.
pub(crate) const NAMES_DIR: &str = "names";
const TOKENIZER: &str = "chalie_trigram";
const NAME_FIELD: &str = "name";
const ORDINAL_FIELD: &str = "ordinal";

fn trigram_analyzer() -> Result<TextAnalyzer, tantivy::TantivyError> {
    Ok(TextAnalyzer::builder(NgramTokenizer::new(3, 3, false)?)
        .filter(LowerCaser)
        .build())
}

fn schema() -> (Schema, Field, Field) {
    let mut builder = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(TOKENIZER)
        .set_index_option(IndexRecordOption::WithFreqs);
    let name = builder.add_text_field(
        NAME_FIELD,
        TextOptions::default().set_indexing_options(indexing),
    );
    let ordinal = builder.add_u64_field(ORDINAL_FIELD, NumericOptions::default().set_stored());
    (builder.build(), name, ordinal)
}

/// Writes the name index for `names` (position = ordinal) into `dir/names`.
pub(crate) fn write(dir: &Path, names: &[&str]) -> Result<(), IndexError> {
    let path = dir.join(NAMES_DIR);
    let write_error = |error: &dyn std::fmt::Display| IndexError::Write {
        path: path.clone(),
        reason: error.to_string(),
    };
    std::fs::create_dir_all(&path).map_err(|e| write_error(&e))?;
    let (schema, name_field, ordinal_field) = schema();
    let index = tantivy::Index::create_in_dir(&path, schema).map_err(|e| write_error(&e))?;
    index
        .tokenizers()
        .register(TOKENIZER, trigram_analyzer().map_err(|e| write_error(&e))?);
    // One thread and the minimum arena: the name index is tiny, and the build machine's
    // cores are better spent on embedding.
    let mut writer = index
        .writer_with_num_threads::<TantivyDocument>(1, 15_000_000)
        .map_err(|e| write_error(&e))?;
    for (ordinal, name) in names.iter().enumerate() {
        let mut document = TantivyDocument::default();
        document.add_text(name_field, name);
        document.add_u64(ordinal_field, ordinal as u64);
        writer.add_document(document).map_err(|e| write_error(&e))?;
    }
    writer.commit().map_err(|e| write_error(&e))?;
    writer.wait_merging_threads().map_err(|e| write_error(&e))?;
    Ok(())
}

/// An opened name index.
pub(crate) struct NameIndex {
    reader: IndexReader,
    name_field: Field,
    ordinal_field: Field,
    analyzer: TextAnalyzer,
}

impl NameIndex {
    /// Opens `dir/names`; its files were checksummed by the caller already.
    pub(crate) fn open(dir: &Path) -> Result<NameIndex, IndexError> {
        let path = dir.join(NAMES_DIR);
        let damaged = |error: &dyn std::fmt::Display| corrupt(&path, error);
        let index = tantivy::Index::open_in_dir(&path).map_err(|e| damaged(&e))?;
        let analyzer = trigram_analyzer().map_err(|e| damaged(&e))?;
        index.tokenizers().register(TOKENIZER, analyzer.clone());
        let schema = index.schema();
        let name_field = schema.get_field(NAME_FIELD).map_err(|e| damaged(&e))?;
        let ordinal_field = schema.get_field(ORDINAL_FIELD).map_err(|e| damaged(&e))?;
        // Manual reloads: the index never changes after the build, so no watcher thread.
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e: tantivy::TantivyError| damaged(&e))?;
        Ok(NameIndex {
            reader,
            name_field,
            ordinal_field,
            analyzer,
        })
    }

    /// Ordinals of names sharing trigrams with `normalised`, best BM25 first.
    pub(crate) fn candidates(
        &self,
        normalised: &str,
        limit: usize,
    ) -> Result<Vec<usize>, IndexError> {
        let mut analyzer = self.analyzer.clone();
        let mut stream = analyzer.token_stream(normalised);
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        while stream.advance() {
            let term = Term::from_field_text(self.name_field, &stream.token().text);
            clauses.push((
                Occur::Should,
                Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
            ));
        }
        if clauses.is_empty() {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let search_error = |error: tantivy::TantivyError| IndexError::Search(error.to_string());
        let top = searcher
            .search(&BooleanQuery::new(clauses), &TopDocs::with_limit(limit))
            .map_err(search_error)?;
        let mut ordinals = Vec::with_capacity(top.len());
        for (_score, address) in top {
            let document: TantivyDocument = searcher.doc(address).map_err(search_error)?;
            if let Some(ordinal) = document
                .get_first(self.ordinal_field)
                .and_then(|v| v.as_u64())
            {
                ordinals.push(ordinal as usize);
            }
        }
        Ok(ordinals)
    }
}

/// The segment gate of the keyword rung: every `_`-token of the query must equal a segment
/// of the name, or be a prefix (of at least three characters) of one.
///
/// Trigrams alone would let `all` match `review_tool_calls` through `c-all-s`; aligning with
/// whole segments keeps `search` → `web_search` and `weath` → `weather_now` but rejects such
/// incidental substrings. A boolean rule, not a score floor, so it behaves the same in a
/// catalog of ten names and of ten thousand.
pub fn segment_gate(normalised_query: &str, name: &str) -> bool {
    let segments: Vec<&str> = name.split('_').filter(|s| !s.is_empty()).collect();
    let mut tokens = normalised_query
        .split('_')
        .filter(|t| !t.is_empty())
        .peekable();
    if tokens.peek().is_none() {
        return false;
    }
    tokens.all(|token| {
        segments
            .iter()
            .any(|segment| *segment == token || (token.len() >= 3 && segment.starts_with(token)))
    })
}

#[cfg(test)]
mod tests {
    use super::segment_gate;

    #[test]
    fn gate_examples() {
        assert!(segment_gate("search", "web_search"));
        assert!(segment_gate("web_search", "web_search"));
        assert!(segment_gate("sea", "web_search"));
        assert!(!segment_gate("all", "review_tool_calls"));
        assert!(!segment_gate("arch", "web_search"));
        assert!(!segment_gate("search_images", "web_search"));
        assert!(!segment_gate("", "web_search"));
    }
}
