//! The store's own runtime, on threads of its own, and the synchronous
//! wait for what it runs.

use std::future::Future;
use std::sync::mpsc;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

use crate::session::store::StoreError;

/// Two workers: the queries are network waits, not computation.
const WORKERS: usize = 2;

/// Owns the runtime's thread; dropping it stops the runtime there (a
/// runtime dropped inside another's task would panic).
pub(super) struct Bridge {
    handle: Handle,
    _stop: oneshot::Sender<()>,
}

impl Bridge {
    pub(super) fn start() -> Result<Self, StoreError> {
        let (ready, started) = mpsc::sync_channel(1);
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("chalie-postgres".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(WORKERS)
                    .thread_name("chalie-postgres-worker")
                    .enable_all()
                    .build();
                match runtime {
                    Ok(runtime) => {
                        let _ = ready.send(Ok(runtime.handle().clone()));
                        // Until the store is dropped.
                        let _ = runtime.block_on(stopped);
                    }
                    Err(error) => {
                        let _ = ready.send(Err(error.to_string()));
                    }
                }
            })
            .map_err(|error| StoreError(format!("cannot start the store's thread: {error}")))?;
        let handle = started
            .recv()
            .map_err(|_| StoreError("the store's thread stopped at start".into()))?
            .map_err(|error| StoreError(format!("cannot start the store's runtime: {error}")))?;
        Ok(Self {
            handle,
            _stop: stop,
        })
    }

    /// Runs `future` on the store's runtime and waits for its answer.
    pub(super) fn run<T: Send + 'static>(
        &self,
        future: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (answer, answered) = mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = answer.send(future.await);
        });
        answered
            .recv()
            .map_err(|_| StoreError("the store's runtime stopped mid-query".into()))?
    }
}
