use thiserror::Error;

pub type Result<T, E = ReportError> = std::result::Result<T, E>;

/// Why a report could not be made.
#[derive(Debug, Error)]
pub enum ReportError {
    #[error(transparent)]
    Store(#[from] iolab_store::StoreError),
    #[error("cannot write the report: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot serialize the report: {0}")]
    Json(#[from] serde_json::Error),
}
