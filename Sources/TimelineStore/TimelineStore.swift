// The TimelineStore target; see ARCHITECTURE.md. Filled by the issues that need it.
