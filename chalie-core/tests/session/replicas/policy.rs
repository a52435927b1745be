//! A policy change made through replica A gates the next call on replica B,
//! without B restarting: B hears of it through the database's notification.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chalie_core::Channel;
use chalie_core::dispatch::Setting;
use chalie_core::session::ScriptedModel;

use super::{fresh_database, replica};

/// Far below a restart, far above a notification's round trip.
const PROMPTLY: Duration = Duration::from_secs(2);

#[tokio::test(flavor = "multi_thread")]
async fn a_policy_change_on_a_reaches_b() {
    let url = fresh_database().await;
    let a = replica(&url, Arc::new(ScriptedModel::new([])));
    let b = replica(&url, Arc::new(ScriptedModel::new([])));
    assert_eq!(
        b.dispatcher().policy().get(Channel::Chat, "lookup"),
        Setting::Allow
    );

    a.set_policy(Channel::Chat, "lookup", Setting::Deny)
        .unwrap();
    assert_eq!(
        a.dispatcher().policy().get(Channel::Chat, "lookup"),
        Setting::Deny
    );
    let changed = Instant::now();
    while b.dispatcher().policy().get(Channel::Chat, "lookup") != Setting::Deny {
        assert!(
            changed.elapsed() < PROMPTLY,
            "B still allows `lookup` {PROMPTLY:?} after A denied it"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // And back: every change is heard, not only the first.
    b.set_policy(Channel::Chat, "lookup", Setting::Allow)
        .unwrap();
    let changed = Instant::now();
    while a.dispatcher().policy().get(Channel::Chat, "lookup") != Setting::Allow {
        assert!(
            changed.elapsed() < PROMPTLY,
            "A still denies `lookup` {PROMPTLY:?} after B allowed it"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
