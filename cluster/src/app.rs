//! The HTTP application clusterd serves on its listener: the fleet API
//! ([`crate::api`]), the dashboard ([`crate::ui`]), remote logs
//! ([`crate::logs_api`]) and `/` sending to
//! `/ui/`, behind the connection's limits ([`crate::serve::guard`]) and the
//! body limit; anything else is fleet's 404 error entity.

use crate::api::{self, Api};
use crate::listen::MAX_BODY;
use crate::respond::not_found;
use crate::serve::guard;
use axum::extract::DefaultBodyLimit;
use axum::Router;
use std::sync::Arc;

/// The whole application, with `api` as its state.
pub fn router(api: Arc<Api>) -> Router {
    api::routes()
        .merge(crate::ui::routes())
        .merge(crate::logs_api::routes())
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(api.clone(), guard))
        .with_state(api)
}
