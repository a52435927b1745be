//! Every provider's published rules, checked on every assembled descriptor,
//! and every schema validated against the JSON Schema 2020-12 meta-schema.

use chalie_core::{
    Channel, descriptor::AbilityExt, descriptor::AssembleOptions, descriptor::Provider,
    descriptor::ToolDescriptor, descriptor::assemble, descriptor::framework_fields_note,
    descriptor::strict_schema, registry,
};
use serde_json::{Value, json};

use super::abilities::{audio, memory, weather};

fn name_ok(name: &str, max: usize, extra: &[char]) -> bool {
    !name.is_empty()
        && name.len() <= max
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(&c))
}

/// Rules every provider shares: object root, `properties` present, closed
/// objects, no references, valid 2020-12.
fn check_common(schema: &Value) {
    assert_eq!(schema["type"], "object", "{schema}");
    assert!(schema["properties"].is_object(), "{schema}");
    assert_eq!(schema["additionalProperties"], false, "{schema}");
    let text = schema.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs") && !text.contains("$schema"),
        "{text}"
    );
    if let Err(error) = jsonschema::draft202012::meta::validate(schema) {
        panic!("not a valid 2020-12 schema: {error}\n{schema}");
    }
}

/// OpenAI strict mode: every object lists every property in `required`,
/// `additionalProperties: false`, no `default`; absence is a null union.
fn check_openai_strict(schema: &Value) {
    check_common(schema);
    fn walk(schema: &Value) {
        let Some(map) = schema.as_object() else {
            return;
        };
        assert!(
            !map.contains_key("default"),
            "default in strict schema: {schema}"
        );
        if map.get("type") == Some(&json!("object"))
            || map
                .get("type")
                .and_then(Value::as_array)
                .is_some_and(|kinds| kinds.contains(&json!("object")))
        {
            let properties = map["properties"].as_object().expect("properties");
            let required: Vec<&str> = map["required"]
                .as_array()
                .expect("required")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let names: Vec<&str> = properties.keys().map(String::as_str).collect();
            assert_eq!(required, names, "every property is required in strict mode");
            assert_eq!(map["additionalProperties"], false);
            properties.values().for_each(walk);
        }
        if let Some(items) = map.get("items") {
            walk(items);
        }
        map.get("anyOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .for_each(walk);
    }
    walk(schema);
}

fn check_all(descriptor: &ToolDescriptor) {
    let openai = descriptor.render(Provider::OpenAiChat);
    assert_eq!(openai["type"], "function");
    assert_eq!(openai["function"]["strict"], true);
    assert!(name_ok(
        openai["function"]["name"].as_str().unwrap(),
        64,
        &[]
    ));
    check_openai_strict(&openai["function"]["parameters"]);

    let responses = descriptor.render(Provider::OpenAiResponses);
    assert_eq!(responses["type"], "function");
    assert_eq!(responses["strict"], true);
    check_openai_strict(&responses["parameters"]);

    let anthropic = descriptor.render(Provider::Anthropic);
    assert!(name_ok(anthropic["name"].as_str().unwrap(), 64, &[]));
    check_common(&anthropic["input_schema"]);
    // Anthropic takes one to five input examples, each valid input.
    match anthropic.get("input_examples") {
        None => assert!(descriptor.input_examples().is_empty()),
        Some(examples) => {
            let examples = examples.as_array().unwrap();
            assert!((1..=5).contains(&examples.len()), "{anthropic}");
            for example in examples {
                if let Err(error) = jsonschema::validate(&anthropic["input_schema"], example) {
                    panic!("input example {example} does not fit the schema: {error}");
                }
            }
        }
    }

    let gemini = descriptor.render(Provider::Gemini);
    let name = gemini["name"].as_str().unwrap();
    assert!(
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name_ok(name, 64, &['.', ':'])
    );
    check_common(&gemini["parametersJsonSchema"]);

    let mcp = descriptor.render(Provider::Mcp);
    assert!(name_ok(mcp["name"].as_str().unwrap(), 128, &['.']));
    check_common(&mcp["inputSchema"]);
    for rendered in [&openai["function"], &responses, &anthropic, &gemini, &mcp] {
        assert!(!rendered["description"].as_str().unwrap().is_empty());
    }
    // No other provider takes the field: OpenAI strict mode rejects it.
    for rendered in [&openai, &openai["function"], &responses, &gemini, &mcp] {
        assert!(rendered.get("input_examples").is_none(), "{rendered}");
    }
}

#[test]
fn input_examples_render_for_anthropic_alone() {
    let descriptor = audio::descriptor(AssembleOptions::default());
    let declared = json!([
        { "action": "generate", "prompt": "an upbeat jingle", "bpm": 120, "duration_seconds": 10.5 },
        { "action": "transcribe", "prompt": "voice-memo.ogg", "language": "it" },
    ]);
    let anthropic = descriptor.render(Provider::Anthropic);
    assert_eq!(anthropic["input_examples"], declared);
    // The key order is the one written, which is what the model reads.
    assert_eq!(
        anthropic["input_examples"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["action", "prompt", "bpm", "duration_seconds"]
    );
    for provider in [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Gemini,
        Provider::Mcp,
    ] {
        let rendered = descriptor.render(provider).to_string();
        assert!(
            !rendered.contains("input_examples"),
            "{provider:?}: {rendered}"
        );
        assert!(
            !rendered.contains("voice-memo.ogg"),
            "{provider:?}: {rendered}"
        );
    }
    // Every declared example is a call the ability's parser accepts.
    let entry = registry().unwrap().get("audio").unwrap();
    for example in declared.as_array().unwrap() {
        assert!(entry.check_arguments(example).is_ok(), "{example}");
    }
    // An ability without input examples renders none.
    let weather = weather::descriptor(AssembleOptions::default()).render(Provider::Anthropic);
    assert!(weather.get("input_examples").is_none(), "{weather}");
}

#[test]
fn every_linked_ability_renders_valid_for_every_provider() {
    let registry = registry().unwrap();
    assert!(registry.len() >= 3);
    for entry in registry.iter() {
        for channel in [Channel::Chat, Channel::Subconscious, Channel::External] {
            check_all(&assemble(entry, AssembleOptions::for_channel(channel)));
        }
    }
}

#[test]
fn the_assembler_injects_framework_fields_and_the_action_enum() {
    let chat = memory::descriptor(AssembleOptions {
        background_calls: true,
        ..AssembleOptions::default()
    });
    let properties = &chat.parameters()["properties"];
    // `memory` is internal: it answers at once, unasked, so it offers
    // neither a line to show while it runs nor `async`.
    assert!(properties.get("act_summary").is_none());
    assert!(properties.get("async").is_none());
    let weather_on_chat = weather::descriptor(AssembleOptions {
        background_calls: true,
        ..AssembleOptions::default()
    });
    assert_eq!(
        weather_on_chat.parameters()["properties"]["act_summary"]["type"],
        "string"
    );
    assert_eq!(
        weather_on_chat.parameters()["properties"]["async"]["type"],
        "boolean"
    );
    assert_eq!(properties["action"]["enum"], json!(["store", "recall"]));
    // Framework fields are never required of the model.
    assert_eq!(chat.parameters()["required"], json!(["action"]));

    let background = weather::descriptor(AssembleOptions {
        background_calls: false,
        ..AssembleOptions::default()
    });
    assert!(background.parameters()["properties"].get("async").is_none());
}

#[test]
fn fields_explained_once_keep_their_types_and_the_note_says_what_they_are() {
    let explained_once = AssembleOptions {
        background_calls: true,
        fields_explained_once: true,
    };
    let properties = weather::descriptor(explained_once).parameters()["properties"].clone();
    assert_eq!(properties["act_summary"], json!({ "type": "string" }));
    assert_eq!(properties["async"], json!({ "type": "boolean" }));
    // The note carries each sentence a schema would have carried.
    let explained_each_time = weather::descriptor(AssembleOptions {
        background_calls: true,
        ..AssembleOptions::default()
    });
    let note = framework_fields_note(explained_once);
    for field in ["act_summary", "async"] {
        let sentence = explained_each_time.parameters()["properties"][field]["description"]
            .as_str()
            .unwrap();
        assert!(note.contains(&format!("`{field}`")), "{note}");
        assert!(note.contains(sentence), "{note} lacks {sentence}");
    }
    assert!(!framework_fields_note(AssembleOptions::default()).contains("`async`"));
}

#[test]
fn strict_rendering_expresses_absence_as_null() {
    let descriptor = weather::descriptor(AssembleOptions::default());
    let strict = &descriptor.render(Provider::OpenAiChat)["function"]["parameters"];
    assert_eq!(
        strict["required"],
        json!(["location", "unit", "act_summary"])
    );
    assert_eq!(strict["properties"]["location"]["type"], "string");
    assert_eq!(
        strict["properties"]["unit"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(
        strict["properties"]["unit"]["enum"],
        json!(["celsius", "fahrenheit", null])
    );
    // And the parser accepts what strict mode makes the model send.
    let entry = registry().unwrap().get("weather").unwrap();
    assert!(
        entry
            .check_arguments(&json!({ "location": "Rome", "unit": null }))
            .is_ok()
    );
}

#[test]
fn descriptors_are_deterministic() {
    let first = serde_json::to_string(
        &weather::descriptor(AssembleOptions::default()).render(Provider::Mcp),
    )
    .unwrap();
    for _ in 0..3 {
        let again = serde_json::to_string(
            &weather::descriptor(AssembleOptions::default()).render(Provider::Mcp),
        )
        .unwrap();
        assert_eq!(first, again);
    }
    assert_eq!(
        weather::descriptor(AssembleOptions::default()).render(Provider::Mcp)["annotations"]["readOnlyHint"],
        true
    );
}

#[test]
fn the_strict_rendering_states_a_default_once() {
    let schema = json!({
        "type": "object",
        "properties": {
            "unit": { "type": "string", "default": "celsius", "description": "The unit; default celsius." },
            "days": { "type": "integer", "default": 3, "description": "How many days." },
        },
        "required": [],
    });
    let strict = strict_schema(&schema);
    // Said in the description already: not repeated.
    assert_eq!(
        strict["properties"]["unit"]["description"],
        "The unit; default celsius."
    );
    // Not said: strict mode drops `default`, so the description carries it.
    assert_eq!(
        strict["properties"]["days"]["description"],
        "How many days. Default: 3."
    );
}
