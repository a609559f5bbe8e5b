# cmake -DIN=file -DOUT=file.cc -DNAME=symbol -P embed.cmake: writes a C++ source defining
# `extern const unsigned char NAME[]` and `extern const unsigned long NAME_size` in namespace
# overpass, holding IN's bytes (the device kernels' fatbin, gpu/CMakeLists.txt).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR bytes "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" body "${body}")
file(WRITE "${OUT}" "// Generated from ${IN} by cmake/embed.cmake.\nnamespace overpass {\n"
     "extern const unsigned char ${NAME}[] = {\n${body}\n};\n"
     "extern const unsigned long ${NAME}_size = ${bytes};\n}  // namespace overpass\n")
