# Writes the file IN as a C string constant returned by sim_scenario_builtin_text() into OUT.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* generated from assets/scenarios/default.ini - do not edit */\n"
  "#include \"sim_scenario.h\"\n"
  "static const char text[] = {${bytes} 0x00};\n"
  "const char *sim_scenario_builtin_text(void) { return text; }\n")
