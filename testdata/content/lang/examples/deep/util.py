def util():
    return 42
