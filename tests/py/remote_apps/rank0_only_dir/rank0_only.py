def fn(args):
    pass
