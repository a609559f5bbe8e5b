// liboverpass.so: the shim and the layers below it, linked whole (see CMakeLists.txt).
