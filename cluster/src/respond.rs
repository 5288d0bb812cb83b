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

/// A `204` as fleet's server wrote it through its JSON responder (the
/// `PATCH /machines` answer): no body, `Content-Type: application/json`,
/// which fleet's own tests check. fleet's unit writes (`201`, `204`) set
/// the status alone, and so do ours.
pub fn json_no_content() -> Response {
    (
        StatusCode::NO_CONTENT,
        [(header::CONTENT_TYPE, "application/json")],
    )
        .into_response()
}

/// The 404 answer.
pub async fn not_found() -> Response {
    error_response(&ApiError::new(404, "not found"))
}

/// The 405 answer.
pub async fn method_not_allowed() -> Response {
    error_response(&ApiError::new(405, "method not allowed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_answer_is_a_json_no_content() {
        let r = json_no_content();
        assert_eq!(r.status(), StatusCode::NO_CONTENT);
        assert_eq!(
            r.headers().get(header::CONTENT_TYPE).map(|v| v.as_bytes()),
            Some(&b"application/json"[..])
        );
    }
}
