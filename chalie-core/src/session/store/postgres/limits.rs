//! The rate-limit windows in the database (a session's, and a session's
//! for each ability that declares a limit), so every replica counts
//! against the same limit.

use futures::FutureExt;

use super::PgStore;
use super::queries::pg_error;
use crate::dispatch::{Admission, RateCounter, RateCounterError, RateLimit, RateScope};

impl RateCounter for PgStore {
    /// A sliding log of the session's calls, as the in-process window
    /// keeps, checked and extended under the session's lock in one
    /// transaction: two replicas counting at once see each other's calls.
    /// The database's clock is the one clock. A scope is its own window:
    /// the session's is the ability `''`, which no ability is named.
    fn admit(
        &self,
        session_id: &str,
        scope: RateScope<'_>,
        limit: RateLimit,
    ) -> Result<Admission, RateCounterError> {
        let session_id = session_id.to_owned();
        let ability = match scope {
            RateScope::Session => String::new(),
            RateScope::Ability(name) => name.to_owned(),
        };
        let per = limit.per().as_secs_f64();
        let calls = i64::from(limit.calls());
        self.transaction(move |transaction| {
            async move {
                transaction
                    .execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended('chalie.rate.' || $1 || '.' || $2, 0))",
                        &[&session_id, &ability],
                    )
                    .await
                    .map_err(pg_error)?;
                transaction
                    .execute(
                        "DELETE FROM rate_calls
                         WHERE session_id = $1 AND ability = $3
                           AND at <= clock_timestamp() - make_interval(secs => $2)",
                        &[&session_id, &per, &ability],
                    )
                    .await
                    .map_err(pg_error)?;
                let row = transaction
                    .query_one(
                        "SELECT COUNT(*), COALESCE(EXTRACT(EPOCH FROM
                           MIN(at) + make_interval(secs => $2) - clock_timestamp())::float8, 0)
                         FROM rate_calls WHERE session_id = $1 AND ability = $3",
                        &[&session_id, &per, &ability],
                    )
                    .await
                    .map_err(pg_error)?;
                let (counted, wait): (i64, f64) = (row.get(0), row.get(1));
                if counted >= calls {
                    return Ok(Admission::Wait(std::time::Duration::from_secs_f64(
                        wait.max(0.0),
                    )));
                }
                transaction
                    .execute(
                        "INSERT INTO rate_calls (session_id, ability, at) VALUES ($1, $2, clock_timestamp())",
                        &[&session_id, &ability],
                    )
                    .await
                    .map_err(pg_error)?;
                Ok(Admission::Admitted)
            }
            .boxed()
        })
        .map_err(|error| RateCounterError(error.0))
    }
}
