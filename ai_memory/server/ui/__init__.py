"""The web view at ``/ui/``: server-rendered pages over the same use cases the JSON routes call.

``access`` holds the one-time login codes, the browser sessions and their CSRF tokens;
``render`` the templates and the markdown; ``routes_read`` the pages, ``routes_actions`` the
few POSTs (feedback, cancel a handoff, pin), ``routes_login`` the code exchange and the API
call that makes a code.
"""
