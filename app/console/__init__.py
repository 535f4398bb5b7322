"""The ops console: a read-only page that shows a session as a timeline.

The page is static (HTML, JavaScript and CSS shipped in the package, nothing fetched from
elsewhere); everything it shows comes from the audit API (ops scope) and the session API
(agent scope) in the browser, with the key the reader gives it.
"""
