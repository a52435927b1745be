//! Every kind of schema change needs its semver bump, and the lock check
//! names the field and the bump.

use chalie_core::{
    Effect, contracts::build::Bump, contracts::build::Capability, contracts::build::ContractLock,
    contracts::build::LockDrift, contracts::build::Manifest, contracts::build::Side,
    contracts::build::check_lock, contracts::build::contract_hash, contracts::build::diff_schemas,
    contracts::build::required_bump,
};
use serde_json::{Value, json};

fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn base() -> Value {
    object(
        json!({
            "city": { "description": "The city.", "type": "string" },
            "days": { "description": "Days ahead, 1 to 7.", "type": "number", "minimum": 1, "maximum": 7 },
            "unit": { "description": "The unit.", "type": "string", "enum": ["celsius", "fahrenheit"] },
        }),
        &["city"],
    )
}

/// The bump `change` needs on the input side, and the field it names.
fn input_bump(change: impl FnOnce(&mut Value)) -> (Bump, Vec<String>) {
    let old = base();
    let mut new = base();
    change(&mut new);
    let changes = diff_schemas(&old, &new, Side::Input);
    let fields = changes.iter().map(|change| change.field.clone()).collect();
    (required_bump(&changes), fields)
}

fn props(schema: &mut Value) -> &mut serde_json::Map<String, Value> {
    schema["properties"].as_object_mut().unwrap()
}

#[test]
fn identical_schemas_need_no_bump() {
    assert_eq!(input_bump(|_| {}), (Bump::None, vec![]));
}

#[test]
fn removing_a_field_is_major() {
    let (bump, fields) = input_bump(|schema| {
        props(schema).remove("unit");
    });
    assert_eq!(bump, Bump::Major);
    assert_eq!(fields, ["unit"]);
}

#[test]
fn renaming_a_field_is_major_and_named_as_a_rename() {
    let old = base();
    let mut new = base();
    let unit = props(&mut new).remove("unit").unwrap();
    props(&mut new).insert("units".into(), unit);
    let changes = diff_schemas(&old, &new, Side::Input);
    assert_eq!(required_bump(&changes), Bump::Major);
    let removed = changes
        .iter()
        .find(|change| change.field == "unit")
        .unwrap();
    assert!(removed.change.contains("renamed to `units`"), "{removed}");
}

#[test]
fn a_new_required_field_is_major() {
    let (bump, fields) = input_bump(|schema| {
        props(schema).insert(
            "country".into(),
            json!({ "description": "ISO code.", "type": "string" }),
        );
        schema["required"] = json!(["city", "country"]);
    });
    assert_eq!((bump, fields), (Bump::Major, vec!["country".to_owned()]));
}

#[test]
fn a_new_optional_field_is_minor() {
    let (bump, fields) = input_bump(|schema| {
        props(schema).insert(
            "country".into(),
            json!({ "description": "ISO code.", "type": "string" }),
        );
    });
    assert_eq!((bump, fields), (Bump::Minor, vec!["country".to_owned()]));
}

#[test]
fn number_to_integer_narrows_and_is_major() {
    let (bump, fields) =
        input_bump(|schema| schema["properties"]["days"]["type"] = json!("integer"));
    assert_eq!((bump, fields), (Bump::Major, vec!["days".to_owned()]));
}

#[test]
fn integer_to_number_widens_and_is_minor() {
    let old = object(
        json!({ "n": { "description": "N.", "type": "integer" } }),
        &["n"],
    );
    let new = object(
        json!({ "n": { "description": "N.", "type": "number" } }),
        &["n"],
    );
    assert_eq!(
        required_bump(&diff_schemas(&old, &new, Side::Input)),
        Bump::Minor
    );
}

#[test]
fn an_unrelated_type_change_is_major() {
    let (bump, _) = input_bump(|schema| schema["properties"]["city"]["type"] = json!("integer"));
    assert_eq!(bump, Bump::Major);
}

#[test]
fn removing_enum_values_is_major_and_adding_them_minor() {
    let (bump, _) = input_bump(|schema| schema["properties"]["unit"]["enum"] = json!(["celsius"]));
    assert_eq!(bump, Bump::Major);
    let (bump, _) = input_bump(|schema| {
        schema["properties"]["unit"]["enum"] = json!(["celsius", "fahrenheit", "kelvin"])
    });
    assert_eq!(bump, Bump::Minor);
    let old = base();
    let mut new = base();
    new["properties"]["unit"]["enum"] = json!(["celsius"]);
    let changes = diff_schemas(&old, &new, Side::Input);
    assert!(
        changes[0].to_string().contains("`fahrenheit`"),
        "{}",
        changes[0]
    );
}

#[test]
fn tighter_bounds_are_major_and_looser_minor() {
    let (bump, _) = input_bump(|schema| schema["properties"]["days"]["maximum"] = json!(5));
    assert_eq!(bump, Bump::Major);
    let (bump, _) = input_bump(|schema| schema["properties"]["days"]["minimum"] = json!(2));
    assert_eq!(bump, Bump::Major);
    let (bump, _) = input_bump(|schema| schema["properties"]["days"]["maximum"] = json!(14));
    assert_eq!(bump, Bump::Minor);
    let (bump, _) = input_bump(|schema| {
        schema["properties"]["days"]
            .as_object_mut()
            .unwrap()
            .remove("maximum");
    });
    assert_eq!(bump, Bump::Minor);
    let (bump, _) = input_bump(|schema| schema["properties"]["city"]["maxLength"] = json!(80));
    assert_eq!(bump, Bump::Major);
}

#[test]
fn optional_to_required_is_major_and_back_minor() {
    let (bump, fields) = input_bump(|schema| schema["required"] = json!(["city", "unit"]));
    assert_eq!((bump, fields), (Bump::Major, vec!["unit".to_owned()]));
    let (bump, _) = input_bump(|schema| schema["required"] = json!([]));
    assert_eq!(bump, Bump::Minor);
}

#[test]
fn wording_is_a_patch_and_a_new_default_minor() {
    let (bump, _) =
        input_bump(|schema| schema["properties"]["city"]["description"] = json!("The town."));
    assert_eq!(bump, Bump::Patch);
    let (bump, _) = input_bump(|schema| schema["properties"]["unit"]["default"] = json!("celsius"));
    assert_eq!(bump, Bump::Minor);
}

#[test]
fn nested_fields_are_named_with_their_path() {
    let old = object(
        json!({ "stops": { "description": "Stops.", "type": "array", "items": object(json!({ "city": { "description": "C.", "type": "string" } }), &["city"]) } }),
        &["stops"],
    );
    let mut new = old.clone();
    new["properties"]["stops"]["items"]["properties"]["city"]["type"] = json!("integer");
    let changes = diff_schemas(&old, &new, Side::Input);
    assert_eq!(changes[0].field, "stops[].city");
    assert_eq!(changes[0].bump, Bump::Major);
}

#[test]
fn outputs_break_the_other_way() {
    let old = object(
        json!({ "id": { "type": "integer" }, "title": { "type": "string" } }),
        &["id", "title"],
    );
    // A removed output field breaks readers.
    let mut removed = old.clone();
    props(&mut removed).remove("title");
    assert_eq!(
        required_bump(&diff_schemas(&old, &removed, Side::Output)),
        Bump::Major
    );
    // A new output field does not.
    let mut added = old.clone();
    props(&mut added).insert("tags".into(), json!({ "type": "array" }));
    assert_eq!(
        required_bump(&diff_schemas(&old, &added, Side::Output)),
        Bump::Minor
    );
    // Returning a wider type breaks readers; a narrower one does not.
    let mut widened = old.clone();
    widened["properties"]["id"]["type"] = json!("number");
    assert_eq!(
        required_bump(&diff_schemas(&old, &widened, Side::Output)),
        Bump::Major
    );
    let mut narrowed = widened.clone();
    narrowed["properties"]["id"]["type"] = json!("integer");
    assert_eq!(
        required_bump(&diff_schemas(&widened, &narrowed, Side::Output)),
        Bump::Minor
    );
    // A field that may now be absent breaks readers.
    let mut optional = old.clone();
    optional["required"] = json!(["id"]);
    assert_eq!(
        required_bump(&diff_schemas(&old, &optional, Side::Output)),
        Bump::Major
    );
}

fn capability(version: &str, input: Value, output: Option<Value>) -> Capability {
    Capability {
        name: "acme.weather".into(),
        ability: "weather".into(),
        description: "Weather.".into(),
        version: version.into(),
        toolset: "weather".into(),
        effect: Effect::Read,
        schema_hash: contract_hash(&input, output.as_ref()),
        input_schema: input,
        output_schema: output,
    }
}

fn manifest(capabilities: Vec<Capability>) -> Manifest {
    Manifest {
        namespace: "acme".into(),
        deployment: None,
        capabilities,
    }
}

fn narrowed() -> Value {
    let mut schema = base();
    schema["properties"]["days"]["type"] = json!("integer");
    schema
}

#[test]
fn an_unchanged_manifest_matches_its_lock() {
    let manifest = manifest(vec![capability("1.0.0", base(), None)]);
    let lock = ContractLock::from_manifest(&manifest);
    assert!(check_lock(&lock, &manifest).is_clean());
    let reread: ContractLock = serde_json::from_str(&lock.to_json()).unwrap();
    assert_eq!(reread, lock);
}

#[test]
fn a_breaking_change_without_a_major_bump_names_field_and_bump() {
    let lock = ContractLock::from_manifest(&manifest(vec![capability("1.4.2", base(), None)]));
    for version in ["1.4.2", "1.4.3", "1.5.0"] {
        let report = check_lock(
            &lock,
            &manifest(vec![capability(version, narrowed(), None)]),
        );
        assert!(!report.can_update(), "{version} should not be enough");
        let problem = &report.problems[0];
        assert_eq!(problem.required, Bump::Major);
        assert_eq!(problem.suggested_version, "2.0.0");
        let message = problem.to_string();
        assert!(message.contains("`acme.weather`"), "{message}");
        assert!(message.contains("input field `days`"), "{message}");
        assert!(message.contains("major"), "{message}");
        assert!(message.contains("version = \"2.0.0\""), "{message}");
    }
}

#[test]
fn a_correct_bump_is_drift_that_update_may_write() {
    let lock = ContractLock::from_manifest(&manifest(vec![capability("1.4.2", base(), None)]));
    let report = check_lock(
        &lock,
        &manifest(vec![capability("2.0.0", narrowed(), None)]),
    );
    assert!(report.can_update());
    assert!(!report.is_clean());
    assert!(matches!(&report.drift[0], LockDrift::Changed { to, .. } if to == "2.0.0"));
}

#[test]
fn an_additive_change_needs_a_minor_bump() {
    let mut added = base();
    props(&mut added).insert(
        "country".into(),
        json!({ "description": "ISO code.", "type": "string" }),
    );
    let lock = ContractLock::from_manifest(&manifest(vec![capability("1.4.2", base(), None)]));
    let report = check_lock(
        &lock,
        &manifest(vec![capability("1.4.3", added.clone(), None)]),
    );
    assert_eq!(report.problems[0].required, Bump::Minor);
    assert_eq!(report.problems[0].suggested_version, "1.5.0");
    assert!(report.problems[0].to_string().contains("`country`"));
    assert!(
        check_lock(
            &lock,
            &manifest(vec![capability("1.5.0", added.clone(), None)])
        )
        .can_update()
    );
    assert!(check_lock(&lock, &manifest(vec![capability("2.0.0", added, None)])).can_update());
}

#[test]
fn zero_versions_follow_cargo() {
    let lock = ContractLock::from_manifest(&manifest(vec![capability("0.3.1", base(), None)]));
    let report = check_lock(
        &lock,
        &manifest(vec![capability("0.3.2", narrowed(), None)]),
    );
    assert_eq!(report.problems[0].suggested_version, "0.4.0");
    assert!(
        check_lock(
            &lock,
            &manifest(vec![capability("0.4.0", narrowed(), None)])
        )
        .can_update()
    );
}

#[test]
fn a_version_going_backwards_is_a_problem() {
    let lock = ContractLock::from_manifest(&manifest(vec![capability("1.4.2", base(), None)]));
    let report = check_lock(&lock, &manifest(vec![capability("1.0.0", base(), None)]));
    assert!(!report.can_update());
    let message = report.problems[0].to_string();
    assert!(
        message.contains("went back from version 1.4.2 to 1.0.0"),
        "{message}"
    );
}

#[test]
fn output_changes_count_too() {
    let output = object(json!({ "id": { "type": "integer" } }), &["id"]);
    let lock = ContractLock::from_manifest(&manifest(vec![capability(
        "1.0.0",
        base(),
        Some(output.clone()),
    )]));
    let report = check_lock(&lock, &manifest(vec![capability("1.0.0", base(), None)]));
    assert_eq!(report.problems[0].required, Bump::Major);
    let mut more = output.clone();
    props(&mut more).insert("title".into(), json!({ "type": "string" }));
    let report = check_lock(
        &lock,
        &manifest(vec![capability("1.0.1", base(), Some(more))]),
    );
    assert_eq!(report.problems[0].required, Bump::Minor);
    assert!(
        report.problems[0]
            .to_string()
            .contains("output field `title`")
    );
}

#[test]
fn added_and_removed_capabilities_are_drift() {
    let lock = ContractLock::from_manifest(&manifest(vec![capability("1.0.0", base(), None)]));
    let mut other = capability("1.0.0", base(), None);
    other.name = "acme.forecast".into();
    let report = check_lock(&lock, &manifest(vec![other]));
    assert!(report.can_update());
    assert!(
        report
            .drift
            .contains(&LockDrift::Added("acme.forecast".into()))
    );
    assert!(
        report
            .drift
            .contains(&LockDrift::Removed("acme.weather".into()))
    );
}

/// A second capability beside `acme.weather`, unchanged in every case below.
fn forecast() -> Capability {
    let mut other = capability("1.2.0", base(), None);
    other.name = "acme.forecast".into();
    other.ability = "forecast".into();
    other
}

/// The deployment version `--update` would write for `now`, after `lock`.
fn deployment_after(lock: &ContractLock, now: Vec<Capability>) -> String {
    let report = check_lock(lock, &manifest(now));
    assert!(report.can_update(), "{:?}", report.problems);
    report.deployment.version
}

#[test]
fn unchanged_contracts_keep_the_deployment_version() {
    let lock = ContractLock::from_manifest(&manifest(vec![
        capability("1.4.2", base(), None),
        forecast(),
    ]));
    let deployment = lock.deployment.clone().unwrap();
    assert_eq!(deployment.version, "1.0.0");
    let report = check_lock(
        &lock,
        &manifest(vec![forecast(), capability("1.4.2", base(), None)]),
    );
    assert!(report.is_clean(), "{:?}", report.drift);
    assert_eq!(report.deployment, deployment);
}

#[test]
fn a_description_only_change_is_a_patch_of_the_deployment() {
    let lock = ContractLock::from_manifest(&manifest(vec![
        capability("1.4.2", base(), None),
        forecast(),
    ]));
    let mut reworded = base();
    reworded["properties"]["city"]["description"] = json!("The city, e.g. `Valletta`.");
    // Wording is a patch by the bump rules: the capability needs one...
    let report = check_lock(
        &lock,
        &manifest(vec![
            capability("1.4.2", reworded.clone(), None),
            forecast(),
        ]),
    );
    assert_eq!(report.problems[0].required, Bump::Patch);
    // ...and once it has it, the deployment moves by a patch too.
    let now = vec![capability("1.4.3", reworded, None), forecast()];
    assert_eq!(deployment_after(&lock, now.clone()), "1.0.1");
    let report = check_lock(&lock, &manifest(now));
    assert!(report.drift.contains(&LockDrift::Deployment {
        from: Some("1.0.0".into()),
        to: "1.0.1".into()
    }));
    assert_ne!(report.deployment.hash, lock.deployment.unwrap().hash);
}

#[test]
fn a_breaking_change_is_a_major_bump_of_the_deployment() {
    let lock = ContractLock::from_manifest(&manifest(vec![
        capability("1.4.2", base(), None),
        forecast(),
    ]));
    let now = vec![capability("2.0.0", narrowed(), None), forecast()];
    assert_eq!(deployment_after(&lock, now.clone()), "2.0.0");
    // Accepted, the lock carries it, and the next check is clean at 2.0.0.
    let manifest = manifest(now);
    let report = check_lock(&lock, &manifest);
    let accepted = ContractLock::accepting(&manifest, report.deployment);
    let again = check_lock(&accepted, &manifest);
    assert!(again.is_clean(), "{:?}", again.drift);
    assert_eq!(again.deployment.version, "2.0.0");
}

#[test]
fn the_strongest_change_among_capabilities_bumps_the_deployment() {
    let lock = ContractLock::from_manifest(&manifest(vec![
        capability("1.4.2", base(), None),
        forecast(),
    ]));
    let mut added = base();
    props(&mut added).insert(
        "country".into(),
        json!({ "description": "ISO code.", "type": "string" }),
    );
    let mut reworded = forecast();
    reworded.input_schema["properties"]["city"]["description"] = json!("The town.");
    reworded.schema_hash = contract_hash(&reworded.input_schema, None);
    reworded.version = "1.2.1".into();
    // A minor change of one and a patch of the other: minor.
    assert_eq!(
        deployment_after(
            &lock,
            vec![capability("1.5.0", added.clone(), None), reworded.clone()]
        ),
        "1.1.0"
    );
    // A new capability is additive: minor.
    let mut new = forecast();
    new.name = "acme.tides".into();
    assert_eq!(
        deployment_after(
            &lock,
            vec![capability("1.4.2", base(), None), forecast(), new]
        ),
        "1.1.0"
    );
    // A removed one breaks its callers: major.
    assert_eq!(
        deployment_after(&lock, vec![capability("1.4.2", base(), None)]),
        "2.0.0"
    );
}

#[test]
fn a_lock_without_a_deployment_starts_one() {
    let manifest = manifest(vec![capability("1.0.0", base(), None)]);
    let mut lock = ContractLock::from_manifest(&manifest);
    lock.deployment = None;
    let report = check_lock(&lock, &manifest);
    assert!(report.can_update());
    assert_eq!(
        report.drift,
        [LockDrift::Deployment {
            from: None,
            to: "1.0.0".into()
        }]
    );
}
