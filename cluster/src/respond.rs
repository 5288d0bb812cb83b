//! How the HTTP side answers: a JSON body with status 200, or fleet's JSON
//! error entity (`{"error":{"code":…,"message":…}}`, docs/fleet-compat.md)
//! with the error's status. The fleet API, the dashboard and the
//! connection guard all answer through these.

use crate::validate::ApiError;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use flotilla_units::fleet_api::ErrorBody;

/// An error entity response.
pub fn error_response(e: &ApiError) -> Response {
    let code = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body =
        serde_json::to_string(&ErrorBody::new(e.code, e.message.clone())).unwrap_or_default();
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// A JSON response with status 200.
pub fn json_response<T: serde::Serialize>(v: &T) -> Response {
    match serde_json::to_string(v) {
        Ok(s) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            s,
        )
            .into_response(),
        Err(e) => error_response(&ApiError::new(500, format!("encoding: {e}"))),
    }
}

/// The 404 answer.
pub async fn not_found() -> Response {
    error_response(&ApiError::new(404, "not found"))
}

/// The 405 answer.
pub async fn method_not_allowed() -> Response {
    error_response(&ApiError::new(405, "method not allowed"))
}
