/* TEMPORARY placeholder */
int countries_detail_placeholder(void) { return 0; }
