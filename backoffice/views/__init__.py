"""The back-office's views, one module per part of the daily work; each is thin: it checks who is asking
(``backoffice.members.member_view``), reads through the account-scoped selectors, calls the services, renders."""
