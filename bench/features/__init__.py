"""One feature each, measured: file history (`filehistory`), line origin precision and recall
(`lineorigin`), masking (`masking`), document links (`doclinks`), Pi's event_search tool (`pi_tool`)."""
