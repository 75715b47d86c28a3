import asc

@asc.kernel(boundscheck=True)
def control(x, n):
    try:
        if n < 0:
            raise ValueError("negative n")
        if n == 0:
            raise ZeroDivisionError
        x[0] = 1 // n
    except (ValueError, ZeroDivisionError) as e:
        x[0] = -1
    except IndexError:
        raise
    except:
        pass
    else:
        x[1] = 1
    finally:
        x[2] = 2
    try:
        x[3] = 3
    finally:
        pass
    assert n >= 0
    assert n < 100, "n too large"
    with asc.critical():
        x[4] += 1
